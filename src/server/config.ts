// SPDX-License-Identifier: GPL-3.0-or-later
import { availableParallelism } from 'node:os';
import type { ClusterTiming } from './cluster/cluster.js';
import type { MediaSettings } from './startMediaCore.js';
import type { LiveKitCredentials } from '../media/mediaCore.js';

/** Limits of every key (the product's decisions where the specification is silent); every one is
 * configurable, these are the defaults. */
export interface Limits {
  fileBytes: number;
  clipMinMs: number;
  clipMaxMs: number;
  speakTextChars: number;
  audioPayloadMs: number;
  jsonBodyBytes: number;
  requestsPerSecond: number;
  requestBurst: number;
  idleTimeoutSeconds: number;
  maxDurationSeconds: number;
  defaultConcurrencyCap: number;
  participantTokenTtlSeconds: number;
  urlFetchTimeoutMs: number;
  /** How long a `publish_on_behalf` agent may be gone before the session ends (agent_left). */
  agentAbsenceMs: number;
  /**
   * Bound on each stage of a create that the session manager waits on (the database insert,
   * the media start: room set-up, join, publish, first frame); past it the session ends `error`.
   */
  createStageTimeoutMs: number;
  /** How often media that the store does not list as live on this node is looked for. */
  reconcileIntervalMs: number;
  /** Largest portrait accepted for a photo avatar, decoded pixels. */
  imageMaxPixels: number;
  /** Smallest face a photo avatar is made from: the face box's longer side, px. */
  minFacePx: number;
  /** Photo avatar builds one node runs or queues at once; more answer 429 platform_busy. */
  avatarBuildsInFlight: number;
}

export const DEFAULT_LIMITS: Limits = {
  fileBytes: 20 * 1024 * 1024,
  clipMinMs: 1_000,
  clipMaxMs: 5 * 60_000,
  speakTextChars: 4096,
  audioPayloadMs: 60_000,
  jsonBodyBytes: 256 * 1024,
  requestsPerSecond: 20,
  requestBurst: 100,
  idleTimeoutSeconds: 300,
  maxDurationSeconds: 3600,
  defaultConcurrencyCap: 3,
  participantTokenTtlSeconds: 3600,
  urlFetchTimeoutMs: 10_000,
  agentAbsenceMs: 10_000,
  createStageTimeoutMs: 30_000,
  reconcileIntervalMs: 30_000,
  imageMaxPixels: 40_000_000,
  minFacePx: 96,
  avatarBuildsInFlight: 4,
};

export interface ServerConfig {
  host: string;
  port: number;
  dataDir: string;
  /**
   * A PostgreSQL server (`DATABASE_URL`) shared by every node, instead of the embedded database
   * in `dataDir`; file bytes then go into it too.
   */
  databaseUrl?: string;
  /**
   * A database template (store/databaseTemplate.ts) that a new embedded database is copied from
   * instead of being initialised: a first start in seconds rather than tens of them.
   */
  databaseTemplate?: string;
  /** Identifies this node's sessions in a shared database. */
  nodeId: string;
  /** Sessions this node runs at most (`platform_busy` beyond). */
  maxSessions: number;
  /**
   * Media processes (each a real media core on its own event loop); 0 or absent: the
   * media runs in this process. Used when the runtime makes the media core itself.
   */
  mediaProcesses?: number;
  allowPrivateUrls: boolean;
  /**
   * The service's public base URL (`VISAGE_PUBLIC_URL`), for the absolute URLs it hands out (a
   * `client` session's `atlas_url`); absent: the origin each request came to.
   */
  publicUrl?: string;
  limits: Limits;
  /**
   * The LiveKit deployment the avatars join; a promise for one still starting (the embedded
   * server of `visage dev`), awaited together with the database and the media core.
   */
  livekit: LiveKitCredentials | Promise<LiveKitCredentials>;
  version: string;
  /** The media's settings (codec, speech engines, process replacement); defaults: see there. */
  media?: MediaSettings;
  /** Heartbeat, loss and reply timing of a cluster (DATABASE_URL); defaults in cluster.ts. */
  cluster?: Partial<ClusterTiming>;
}

export function defaultMaxSessions(): number {
  // Measured media cost is well under a core per session; keep headroom for the API and encoder.
  return Math.max(2, availableParallelism() * 4);
}
