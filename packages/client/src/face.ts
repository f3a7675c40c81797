// SPDX-License-Identifier: Apache-2.0
/**
 * `@visage-avatar/client/face`: the face stream's format and its reader's timeline alone, for a
 * renderer in the viewer's browser (`@visage-avatar/web`). It needs zod's small build only, where
 * `./api` (the whole wire contract) needs the classic one: some 20 kB in a page instead of 460.
 */
export * from './api/faceStream.js';
export * from './api/faceTimeline.js';
