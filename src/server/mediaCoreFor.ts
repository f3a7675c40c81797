import type { Logger } from 'pino';
import type { MediaAssets, MediaCore } from '../media/mediaCore.js';
import { LiveKitMediaCore } from '../media/session/index.js';
import type { StartupProgress } from '../media/startupProgress.js';
import type { TtsEngines } from '../media/tts/index.js';
import { WorkerPoolMediaCore } from '../media/workerPool/index.js';

export interface MediaCoreChoice {
  /** Worker processes; 0: the media runs in this process. */
  workers: number;
  log: Logger;
  agentAbsenceMs: number;
  /** Where the avatars' atlases are kept between runs. */
  cacheDir: string;
  progress?: StartupProgress;
  /** This process's TTS engines, for media in this process. */
  tts?: TtsEngines;
  /** Stored bytes the media reads by id (photo builds). */
  assets?: MediaAssets;
}

/**
 * The node's media core: avatars in LiveKit rooms, in `workers` worker processes (one event
 * loop each), or in this process when `workers` is 0.
 */
export function mediaCoreFor(o: MediaCoreChoice): Promise<MediaCore> {
  const common = {
    log: o.log,
    agentAbsenceMs: o.agentAbsenceMs,
    cacheDir: o.cacheDir,
    progress: o.progress,
    assets: o.assets,
  };
  return o.workers > 0
    ? WorkerPoolMediaCore.create({ ...common, workers: o.workers })
    : LiveKitMediaCore.create({ ...common, tts: o.tts });
}
