// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Media processes: child processes of the API process, each running a `LiveKitMediaCore`, driven
 * over IPC by `ProcessPoolMediaCore`. Operators set their number with `--media-processes`
 * (`mediaProcesses` in the config); they are not LiveKit's agent workers, nor threads
 * (docs/architecture.md, "Glossary").
 */
export { ProcessPoolMediaCore, type ProcessPoolOptions } from './processPoolMediaCore.js';
export type { MediaProcessStats } from './mediaProcessProtocol.js';
