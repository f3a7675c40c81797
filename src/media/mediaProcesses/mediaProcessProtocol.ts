// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * What the API process and a media process say to each other (over `IpcPeer`, with
 * Node's `advanced` serialization, so PCM travels as a typed array, not as JSON numbers).
 *
 * API -> process requests: `init` (MediaProcessInit -> MediaProcessReady), `start` ({ spec } ->
 * null), `interrupt` ({ sessionId } -> InterruptOutcome), `close` ({ sessionId } -> null),
 * `shutdown`, `stats` (null -> MediaProcessStats), `memory` (null -> MediaProcessMemory).
 * API -> process events: `speak` ({ sessionId, item }), `audio` ({ sessionId, item }),
 * `waiting` ({ sessionId, waiting }).
 * Process -> API events: `speaking`, `ended`, `log`, `progress`.
 * Process -> API requests: `asset` ({ id } -> Uint8Array): bytes the media needs by id (an
 * uploaded photo, say), read by the API process from its file storage.
 */
import type { Level } from 'pino';
import type {
  AudioItem,
  MediaAssets,
  MediaEndReason,
  MediaSessionSpec,
  SpeechItem,
} from '../mediaCore.js';
import type { AvatarVideoCodec } from '../room/index.js';
import type { StartupStep } from '../startupProgress.js';
import type { TtsOptions } from '../tts/index.js';
import type { IpcPeer } from './ipcPeer.js';

export interface MediaProcessInit {
  /** 0-based number of the process on its node (for logs). */
  index: number;
  /** Where the avatars' atlases are kept between runs (shared by the processes of a node). */
  cacheDir?: string;
  agentAbsenceMs?: number;
  stageTimeoutMs?: number;
  /** pino level of the process's logger; its records go to the API process's logger. */
  logLevel: Level | 'silent';
  /** Whether to send `progress` events for its start-up steps. */
  reportProgress: boolean;
  /** The avatars' video codec. */
  videoCodec?: AvatarVideoCodec;
  /** The speech engines' settings (they hold providers' keys: never logged). */
  tts?: TtsOptions;
}

export interface MediaProcessReady {
  pid: number;
  readyMs: number;
}

/** A process's load, for operators and the bench. */
export interface MediaProcessStats {
  pid: number;
  sessions: number;
  /** CPU time the process used so far (user + system), ms. */
  cpuMs: number;
  /** Share of time its event loop was busy since the previous `stats` request (0..1). */
  eventLoop: number;
}

/** A process's memory, for the churn bench (after a full collection where `gc` is exposed). */
export interface MediaProcessMemory {
  pid: number;
  /** Resident set size, bytes. */
  rss: number;
  /** V8 heap in use, bytes. */
  heapUsed: number;
}

export interface StartRequest {
  spec: MediaSessionSpec;
}
export interface SessionRef {
  sessionId: string;
}
export interface SpeakEvent extends SessionRef {
  item: SpeechItem;
}
export interface AudioEvent extends SessionRef {
  item: AudioItem;
}
export interface WaitingEvent extends SessionRef {
  waiting: boolean;
}
export interface SpeakingEvent extends SessionRef {
  speaking: boolean;
}
export interface EndedEvent extends SessionRef {
  reason: MediaEndReason;
  detail: string;
}
/** A `log` event is one JSON line of the process's pino (no time, pid or host: the API adds them). */
export type LogEvent = string;
export type ProgressEvent = StartupStep;
export interface AssetRequest {
  id: string;
}

/** The process's view of the API process's assets: each `get` is one request over the channel. */
export function remoteAssets(peer: IpcPeer): MediaAssets {
  return { get: (id) => peer.request<Uint8Array>('asset', { id } satisfies AssetRequest) };
}

/** The API process answers a process's `asset` requests from `assets`. */
export function serveAssets(peer: IpcPeer, assets: MediaAssets | undefined): void {
  peer.handle('asset', async ({ id }: AssetRequest) => {
    if (!assets) throw new Error(`no asset source: cannot load ${id}`);
    return assets.get(id);
  });
}
