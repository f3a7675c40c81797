// SPDX-License-Identifier: Apache-2.0
/** `visage/client`: the typed HTTP client of the Visage API. */
export {
  VisageClient,
  type VisageClientOptions,
  type RequestOptions,
  type WithConcurrency,
} from './visageClient.js';
export {
  VisageError,
  VisageApiError,
  VisageAuthenticationError,
  VisageNotFoundError,
  VisageConflictError,
  VisageRateLimitError,
  VisageConnectionError,
  type Concurrency,
} from './errors.js';
export type * from './api/resources.js';
export type * from './api/requests.js';
