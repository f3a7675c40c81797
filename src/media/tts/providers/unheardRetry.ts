// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { SpeechChunk } from '../ttsEngine.js';
import { TtsProviderError, TtsProviderUnavailableError } from '../ttsProviderError.js';
import { RATE_LIMIT_RETRIES, rateLimitDelayMs } from './retryPolicy.js';

/**
 * A fault worth another try: the provider's rate or concurrency limit (429, or the error message
 * it sends for one inside an open socket), its overload (5xx), or a line that dropped or could
 * not be opened. A refusal of the request itself (a bad voice, a bad key) is not.
 */
export function isTransientProviderFault(err: unknown): boolean {
  if (err instanceof TtsProviderUnavailableError) return true;
  if (!(err instanceof TtsProviderError) || err.status === undefined) return false;
  return err.status === 429 || err.status >= 500;
}

/**
 * Speaks an utterance with `attempt`, trying again (within the bound of a 429 at connect time:
 * RATE_LIMIT_RETRIES, waiting 250 ms, 500 ms, 1 s) when it fails with a transient fault before
 * anything of it was handed on, wherever the fault arrived (at the handshake or inside the open
 * socket). Once a chunk was handed on, a fault fails the utterance: what was heard stays heard,
 * and the player ends the utterance with it. An abort while waiting ends the utterance quietly.
 */
export async function* speakRetryingUnheard(
  provider: string,
  signal: AbortSignal,
  log: Logger,
  attempt: () => AsyncIterable<SpeechChunk>,
): AsyncGenerator<SpeechChunk> {
  for (let tries = 0; ; tries++) {
    let handedOn = false;
    try {
      for await (const chunk of attempt()) {
        handedOn = true;
        yield chunk;
      }
      return;
    } catch (err) {
      if (handedOn || signal.aborted || !isTransientProviderFault(err)) throw err;
      if (tries >= RATE_LIMIT_RETRIES) throw err;
      const waitMs = rateLimitDelayMs(tries);
      log.warn(
        { err: String(err), retry: tries + 1, of: RATE_LIMIT_RETRIES, wait_ms: waitMs },
        `${provider}: a transient fault before any audio; the utterance is tried again`,
      );
      // An abort cuts the wait short (timers/promises rejects); the stream then ends quietly.
      await sleep(waitMs, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) return;
    }
  }
}
