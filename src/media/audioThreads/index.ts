// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Audio threads: `worker_threads` of this process that decode untrusted audio and find speech in
 * it, off the event loop and inside a heap limit.
 */
export {
  AudioThreadPool,
  audioThreadPool,
  speechThreadPool,
  type AudioThreadPoolOptions,
} from './audioThreadPool.js';
