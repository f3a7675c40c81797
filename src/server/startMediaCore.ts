// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import type { MediaAssets, MediaCore } from '../media/mediaCore.js';
import type { StartupProgress } from '../media/startupProgress.js';
import type { AvatarVideoCodec } from '../media/room/index.js';
import type { TtsEngines, TtsOptions } from '../media/tts/index.js';
import { ProcessPoolMediaCore } from '../media/mediaProcesses/index.js';

export interface MediaCoreChoice {
  /** Media processes; 0: the media runs in this process. */
  processes: number;
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
  /** Sessions a media process runs before a fresh one replaces it (default 100). */
  maxSessionsPerProcess?: number;
  /** The speech engines' settings: each process makes its engines from them. */
  tts?: TtsOptions;
}

/**
 * The node's media core: avatars in LiveKit rooms, in `processes` media processes (one event
 * loop each), or in this process when `processes` is 0.
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
  return o.processes > 0
    ? ProcessPoolMediaCore.create({
        ...common,
        processes: o.processes,
        maxSessionsPerProcess: o.settings?.maxSessionsPerProcess,
        tts: o.settings?.tts,
      })
    : // Loaded only for media in this process: an API process with media processes need not load
      // rtc-node (its native runtime and protocol code) at start-up.
      import('../media/room/index.js').then(({ LiveKitMediaCore }) =>
        LiveKitMediaCore.create({ ...common, tts: o.tts }),
      );
}
