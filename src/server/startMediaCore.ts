// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import type { MediaAssets, MediaCore } from '../media/mediaCore.js';
import { LiveKitMediaCore } from '../media/session/index.js';
import type { StartupProgress } from '../media/startupProgress.js';
import type { AvatarVideoCodec } from '../media/session/index.js';
import type { TtsEngines, TtsOptions } from '../media/tts/index.js';
import { ProcessPoolMediaCore } from '../media/mediaProcesses/index.js';

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
  /** What the operator chose for the media (see MediaSettings). */
  settings?: MediaSettings;
}

/** The operator's media settings, as the CLI read them. */
export interface MediaSettings {
  /** The avatars' video codec (default H.264). */
  videoCodec?: AvatarVideoCodec;
  /** Sessions a media worker process runs before a fresh one replaces it (default 100). */
  maxSessionsPerWorker?: number;
  /** The speech engines' settings: each process makes its engines from them. */
  tts?: TtsOptions;
}

/**
 * The node's media core: avatars in LiveKit rooms, in `workers` worker processes (one event
 * loop each), or in this process when `workers` is 0.
 */
export function startMediaCore(o: MediaCoreChoice): Promise<MediaCore> {
  const common = {
    log: o.log,
    agentAbsenceMs: o.agentAbsenceMs,
    cacheDir: o.cacheDir,
    progress: o.progress,
    assets: o.assets,
    videoCodec: o.settings?.videoCodec,
  };
  return o.workers > 0
    ? ProcessPoolMediaCore.create({
        ...common,
        workers: o.workers,
        maxSessionsPerWorker: o.settings?.maxSessionsPerWorker,
        tts: o.settings?.tts,
      })
    : LiveKitMediaCore.create({ ...common, tts: o.tts });
}
