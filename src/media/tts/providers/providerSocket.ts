import WebSocket from 'ws';
import { TtsProviderError, TtsProviderUnavailableError } from '../ttsProviderError.js';
import { providerReason } from './providerReason.js';
import { RATE_LIMIT_RETRIES, rateLimitDelayMs, sleep } from './retryPolicy.js';

const CONNECT_TIMEOUT_MS = 10_000;

function connectOnce(provider: string, url: URL, headers: Record<string, string>) {
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

/**
 * Opens a provider's WebSocket (auth in headers, never in the URL). A 429 at the handshake is
 * retried within a bound; a refusal throws TtsProviderError, a network failure
 * TtsProviderUnavailableError.
 */
export async function connectProviderSocket(
  provider: string,
  url: URL,
  headers: Record<string, string>,
): Promise<WebSocket> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await connectOnce(provider, url, headers);
    } catch (err) {
      if (err instanceof TtsProviderError && err.status === 429 && attempt < RATE_LIMIT_RETRIES) {
        await sleep(rateLimitDelayMs(attempt));
        continue;
      }
      throw err;
    }
  }
}
