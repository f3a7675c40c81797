// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The seam between the session manager (HTTP side) and the media core (room, voice, face).
 * The session manager owns state, ordering, limits and timers; a media session owns the avatar
 * in its room and reports back what only it can see (speaking, the room going away).
 */

/**
 * The LiveKit server a session's avatar joins: the service's own (its keys mint the avatar's
 * token) or one the caller brought (the caller's token for the avatar, used as given).
 */
export type LiveKitTarget = LiveKitCredentials | { url: string; token: string };

/**
 * A LiveKit server Visage holds API credentials for: its own (the embedded one or the
 * operator's), never a caller's (reached with a token, see LiveKitTarget).
 */
export interface LiveKitCredentials {
  /** URL clients join with (ws:// or wss://). */
  url: string;
  apiKey: string;
  apiSecret: string;
}

/**
 * What the renderer needs to show an avatar (plain JSON, like the whole spec): a catalogue
 * face by its design name, or a photo avatar by the id of its stored build (read through the
 * core's `MediaAssets`).
 */
export type AvatarFaceSpec =
  { source: 'stock'; design: string } | { source: 'photo'; buildId: string };

/**
 * Where the media core reads stored bytes (photo builds) by id: the API process backs it with
 * its file storage; a media core in a media process asks the API process for them.
 */
export interface MediaAssets {
  /** The bytes stored under `id`; rejects when there are none. */
  get(id: string): Promise<Uint8Array>;
}

export interface MediaSessionSpec {
  sessionId: string;
  /**
   * `video`: the avatar publishes its face as a video track. `client`: no video; the face's state
   * goes out as a timed text stream (`visage.face`) for a renderer in the viewer's browser.
   */
  mode: 'video' | 'client';
  avatarId: string;
  avatar: AvatarFaceSpec;
  voiceId: string;
  /** The engine that made the voice (`espeak`, `elevenlabs`, `cartesia`): it speaks it. */
  voiceEngine: string;
  /** What that engine stored with the voice when it was made; null for stock voices. */
  voiceProfile: unknown;
  roomName: string;
  agentIdentity: string;
  publishOnBehalf: string | null;
  livekit: LiveKitTarget;
  /**
   * How long the room may stay empty (nobody joined yet, or everyone left) before the LiveKit
   * server closes it; the media core configures the room with it before joining. The session's
   * own timers (idle, maximum length) end it earlier.
   */
  roomTimeoutSeconds: number;
  /** Visage named the room for this session alone: it is deleted when the session ends. */
  ownsRoom: boolean;
  /**
   * `client` mode: where the viewer's browser fetches the avatar's atlas, for the face stream's
   * `start` line (`atlas_url`): signed URLs by expiry, ascending, the first the one the create
   * answered with, the others those the service hands out on each later day of the session's
   * longest run (a stream started then carries the one of its day, never an expired one).
   */
  atlasUrls?: readonly TimedAtlasUrl[];
}

/** A signed atlas URL and its expiry (unix seconds). */
export interface TimedAtlasUrl {
  url: string;
  expires: number;
}

export interface SpeechItem {
  utteranceId: string;
  text: string;
}

export interface AudioItem {
  utteranceId: string;
  /** Mono PCM at `sampleRate`. */
  pcm: Float32Array;
  sampleRate: number;
  /** Transcript to publish on lk.chat, when the caller gave one. */
  text: string | null;
}

export interface InterruptOutcome {
  interrupted: boolean;
  droppedUtterances: number;
}

/** Why the media side ended a session on its own. */
export type MediaEndReason = 'room_closed' | 'agent_left' | 'error';

export interface MediaSessionObserver {
  /** Speech started or stopped playing (drives the idle timeout). */
  speakingChanged(speaking: boolean): void;
  /** The room, the LiveKit server or the media pipeline went away; the session must end. */
  ended(reason: MediaEndReason, detail: string): void;
}

export interface MediaSession {
  /** Queues text; utterances play in the order they were queued. */
  speak(item: SpeechItem): void;
  /** Queues decoded audio, in the same queue as speech. */
  playAudio(item: AudioItem): void;
  /**
   * Stops what is playing and drops everything queued. A media session in another process
   * answers asynchronously; callers await it either way.
   */
  interrupt(): InterruptOutcome | Promise<InterruptOutcome>;
  setWaiting(waiting: boolean): void;
  readonly speaking: boolean;
  /** Leaves the room and releases every resource. Idempotent. */
  close(): Promise<void>;
}

export interface MediaCore {
  /** Short description for logs and /healthz, e.g. `livekit` or `none`. */
  readonly kind: string;
  start(spec: MediaSessionSpec, observer: MediaSessionObserver): Promise<MediaSession>;
  /**
   * Every media session this core runs now, by session id: from the moment `start` is called
   * until the session is closed (reconciliation compares it with the store).
   */
  running(): ReadonlyMap<string, MediaSession>;
  /**
   * Resolves once the core can start sessions, or once it failed to start (`start` then says
   * why). Absent: it can from the moment it exists. See StartingMediaCore.
   */
  whenStarted?(): Promise<void>;
  close(): Promise<void>;
}

/** Thrown by `start` when the LiveKit server or the media pipeline cannot take the session. */
export class MediaUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MediaUnavailableError';
  }
}

/** The LiveKit server refused the avatar's token (401/403): a credentials problem, not load. */
export class MediaJoinRefusedError extends MediaUnavailableError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MediaJoinRefusedError';
  }
}
