// SPDX-License-Identifier: Apache-2.0
/** The wire contract: the single source of truth for server, client and OpenAPI. */
export * from './idFormat.js';
export * from './ids.js';
export * from './text.js';
export * from './errors.js';
export * from './headers.js';
export * from './resources.js';
export * from './requests.js';
export * from './endpoints.js';
export * from './chat.js';
export * from './faceStream.js';
export * from './faceTimeline.js';
export * from './audioTypes.js';
export * from './openapi.js';
