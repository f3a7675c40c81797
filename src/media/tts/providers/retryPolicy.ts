// SPDX-License-Identifier: GPL-3.0-or-later
/** Provider 429s are retried this many times, waiting 250 ms, 500 ms, 1 s (then the call fails). */
export const RATE_LIMIT_RETRIES = 3;

export function rateLimitDelayMs(attempt: number): number {
  return 250 * 2 ** attempt;
}
