// SPDX-License-Identifier: GPL-3.0-or-later
import WebSocket from 'ws';
import { TtsProviderError, TtsProviderUnavailableError } from '../ttsProviderError.js';
import { providerReason } from './providerReason.js';

const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Opens a provider's WebSocket (auth in headers, never in the URL). A refusal at the handshake
 * throws TtsProviderError (with its status), a network failure TtsProviderUnavailableError. Not
 * retried here: an utterance retries a transient fault the same way wherever it arrives, handshake or
 * open socket (speakRetryingUnheard in unheardRetry.ts), within one bound.
 */
export function connectProviderSocket(
  provider: string,
  url: URL,
  headers: Record<string, string>,
): Promise<WebSocket> {
  return new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(url, { headers, handshakeTimeout: CONNECT_TIMEOUT_MS });
    ws.once('open', () => {
      ws.removeAllListeners('error');
      resolve(ws);
    });
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        reject(
          new TtsProviderError(
            provider,
            res.statusCode,
            providerReason(Buffer.concat(chunks).toString('utf8')),
          ),
        );
        ws.terminate();
      });
    });
    ws.once('error', (err: Error & { code?: string }) => {
      reject(new TtsProviderUnavailableError(provider, err.code ?? err.message, { cause: err }));
    });
  });
}
