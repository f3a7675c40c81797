// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * A speech provider refused or failed a request (HTTP 4xx/5xx, a WebSocket error message). The
 * message carries the provider's own reason, never the key.
 */
export class TtsProviderError extends Error {
  override readonly name = 'TtsProviderError';
  constructor(
    readonly provider: string,
    /** HTTP status, when the provider answered one. */
    readonly status: number | undefined,
    reason: string,
  ) {
    super(`${provider}${status === undefined ? '' : ` answered ${status}`}: ${reason}`);
  }
}

/** A speech provider could not be reached (connection refused, DNS, timeout). */
export class TtsProviderUnavailableError extends Error {
  override readonly name = 'TtsProviderUnavailableError';
  constructor(
    readonly provider: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${provider} is unreachable: ${reason}`, options);
  }
}
