import { ERROR_CODES, type ErrorCode } from '../../api/index.js';

/** An error that maps to one row of the error table; anything else becomes 500 `internal`. */
export class ApiError extends Error {
  readonly status: number;
  readonly type: string;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: { param?: string; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_CODES[code].status;
    this.type = ERROR_CODES[code].type;
  }
}
