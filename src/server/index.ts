// SPDX-License-Identifier: GPL-3.0-or-later
/** `visage/server`: run the Visage service in-process. */
export { startVisage, type VisageServer, type StartOptions } from './runtime.js';
export { createApp, type AppDeps, type MountedPages } from './http/app.js';
export { DEFAULT_LIMITS, type Limits, type ServerConfig } from './config.js';
export type { LiveKitCredentials } from '../media/mediaCore.js';
export { Store } from './store/store.js';
export { keyAdmin, type KeyView } from './admin/keyAdmin.js';
export { createLogger } from './logger.js';
export type { MediaCore, MediaSession, MediaSessionSpec } from '../media/mediaCore.js';
