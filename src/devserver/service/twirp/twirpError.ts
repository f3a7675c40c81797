// SPDX-License-Identifier: GPL-3.0-or-later
/** Twirp error codes and the HTTP status each maps to (twirp spec v7). */
const STATUS_BY_CODE = {
  invalid_argument: 400,
  malformed: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  bad_route: 404,
  already_exists: 409,
  failed_precondition: 412,
  resource_exhausted: 429,
  internal: 500,
  unimplemented: 501,
} as const;

export type TwirpErrorCode = keyof typeof STATUS_BY_CODE;

export class TwirpError extends Error {
  readonly code: TwirpErrorCode;

  constructor(code: TwirpErrorCode, message: string) {
    super(message);
    this.code = code;
  }

  get status(): number {
    return STATUS_BY_CODE[this.code];
  }

  toJson(): string {
    return JSON.stringify({ code: this.code, msg: this.message });
  }
}
