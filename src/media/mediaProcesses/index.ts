// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Media processes: child processes of the API process, each running a `LiveKitMediaCore`, driven
 * over IPC by `ProcessPoolMediaCore`. Operators know them as "media workers" (`--workers`,
 * `mediaWorkers`, the logs); they are not LiveKit's agent workers, nor threads.
 */
export { ProcessPoolMediaCore, type ProcessPoolOptions } from './processPoolMediaCore.js';
export type { MediaProcessStats } from './mediaProcessProtocol.js';
