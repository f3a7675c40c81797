// SPDX-License-Identifier: Apache-2.0
/** Header names of the wire contract. */
export const HEADERS = {
  requestId: 'x-request-id',
  concurrentSessions: 'x-service-concurrent-sessions',
  maxConcurrentSessions: 'x-service-max-concurrent-sessions',
  retryAfter: 'retry-after',
} as const;
