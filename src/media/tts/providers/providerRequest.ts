// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { TtsProviderError, TtsProviderUnavailableError } from '../ttsProviderError.js';
import { providerReason } from './providerReason.js';
import { RATE_LIMIT_RETRIES, rateLimitDelayMs } from './retryPolicy.js';

const REQUEST_TIMEOUT_MS = 30_000;

/**
 * One HTTP request to a provider, with its JSON answer. A 429 is retried within a bound; other
 * refusals throw TtsProviderError (with the provider's reason), network failures
 * TtsProviderUnavailableError. `body` is rebuilt per attempt (a FormData can be sent once).
 */
export async function providerRequest(
  provider: string,
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: () => BodyInit },
): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, {
        method: init.method,
        headers: init.headers,
        body: init.body?.(),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      // A kept-alive connection the provider closed as we reused it: a GET is safe to repeat.
      if (init.method === 'GET' && cause?.code === 'ECONNRESET' && attempt === 0) continue;
      throw new TtsProviderUnavailableError(
        provider,
        cause?.code ?? cause?.message ?? (err as Error).message,
        { cause: err },
      );
    }
    const text = await res.text();
    if (res.ok) {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new TtsProviderError(provider, res.status, 'the answer is not JSON');
      }
    }
    if (res.status === 429 && attempt < RATE_LIMIT_RETRIES) {
      await sleep(rateLimitDelayMs(attempt));
      continue;
    }
    throw new TtsProviderError(provider, res.status, providerReason(text));
  }
}
