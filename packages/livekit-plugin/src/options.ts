// SPDX-License-Identifier: Apache-2.0
import {
  type APIConnectOptions,
  DEFAULT_API_CONNECT_OPTIONS,
  type tokenize,
} from '@livekit/agents';
import { VisageException } from './errors.js';
import type { AvatarImage } from './photoAvatar.js';

/**
 * `text` (default): the agent's LLM text is spoken by Visage with its own voice, sentence by
 * sentence. `audio`: the agent keeps its own TTS and streams the audio to the avatar over the
 * standard LiveKit avatar protocol (`lk.audio_stream`); Visage only lip-syncs it.
 */
export type AvatarMode = 'text' | 'audio';

export interface AvatarSessionOptions {
  /** The avatar to run (`avt_…`). One of `avatarId`, `avatarImage` or `sessionId` is required. */
  avatarId?: string;
  /**
   * A portrait to animate instead of `avatarId`: a file path or the picture's bytes (JPEG, PNG
   * or WebP; the largest face is used). The plugin makes the photo avatar once (`POST
   * /v1/avatars`, a few seconds) and reuses it for the same picture: its name is
   * `photo <content hash>`.
   */
  avatarImage?: AvatarImage;
  /**
   * The voice (`vc_…` cloned, `voice_…` stock). Default: the avatar's default voice; a photo
   * avatar's (`avatarImage`) is the stock voice that fits its face. With `avatarImage` the
   * session speaks with this voice and the avatar, reused for the same picture, keeps its own.
   */
  voiceId?: string;
  /** Attach to this existing session (`ses_…`) instead of creating one. */
  sessionId?: string;
  /** Default `text`. */
  mode?: AvatarMode;
  /**
   * How the avatar's face reaches the viewers (the session's `mode` in Visage's API). `video`: a
   * video track, drawn on the server. `client`: no video track; the face goes out as the timed
   * `visage.face` text stream, drawn in the viewer's browser. Default: what the job's dispatch
   * metadata asks (`{"face":"client"}`, as `visage dev`'s playground sends it), else `video`.
   */
  face?: AvatarFace;
  /** Secret key (`sk_…`). Default: $VISAGE_API_KEY. */
  apiKey?: string;
  /** Base URL of the Visage API. Default: $VISAGE_API_URL, else http://127.0.0.1:8080. */
  apiUrl?: string;
  /**
   * The avatar's identity in the room. With the agent's LiveKit credentials the plugin mints the
   * avatar's token under this identity (default `visage-avatar-<random>`). Without them the
   * Visage service assigns it (`agent_identity`); when this is set and the service assigned
   * another, `start()` fails rather than listening to the wrong participant.
   */
  avatarParticipantIdentity?: string;
  /**
   * Request timeout (`timeoutMs`) and retries of unanswered requests and 5xx when creating the
   * session (`maxRetry`, `retryIntervalMs`). Default: the framework's (3 retries, 2 s, 10 s).
   * The create itself is waited for at least 150 s: a create given up early still completes on
   * the service, and its retry would start a second avatar with the same identity.
   */
  connOptions?: APIConnectOptions;
  /**
   * Splits the LLM text into the sentences sent to `/speak` (text mode). Default
   * `tokenize.basic.SentenceTokenizer()`, which merges sentences of 20 characters or fewer into
   * the next; pass `{ minSentenceLength: 1 }` for a faster first sentence.
   */
  sentenceTokenizer?: tokenize.SentenceTokenizer;
  /**
   * Park the avatar (`waiting_state`) after this many seconds with neither side speaking; it
   * resumes before the next speech and when the user speaks. `null` never parks. Default 30.
   */
  parkAfterSeconds?: number | null;
  /** The service's idle timeout for this session (`idle_timeout_seconds`), 5..86400. */
  idleTimeoutSeconds?: number;
  /**
   * How long `start()` keeps retrying a `429` (`concurrency_cap`, `platform_busy`) after its
   * Retry-After before raising `VisageCapacityError`. Seconds; 0 raises at once. Default 30.
   */
  maxCapacityWaitSeconds?: number;
  /**
   * Text mode: a segment is ended (and the avatar interrupted) when the avatar shows no sign of
   * life for this long while it should be speaking. Milliseconds. Default 10000.
   */
  playbackTimeoutMs?: number;
  /**
   * Text mode: the longest an interruption waits for the avatar's report of what was heard.
   * Milliseconds. Default 2000: the report usually comes within about 100 ms, but on a busy
   * machine it came after the 750 ms this once was, and the chat history then kept words fewer
   * than the avatar said. Well under the framework's 5 s interruption watchdog.
   */
  interruptGraceMs?: number;
}

/**
 * The agent's LiveKit server and credentials. With all three, the plugin mints the avatar's
 * token for the agent's room itself and Visage joins that LiveKit with it (any LiveKit, whether
 * Visage has keys for it or not); without them, Visage joins the LiveKit it is configured with.
 */
export interface StartOptions {
  /** Default: $LIVEKIT_URL. */
  livekitUrl?: string;
  /** Default: $LIVEKIT_API_KEY. */
  livekitApiKey?: string;
  /** Default: $LIVEKIT_API_SECRET. */
  livekitApiSecret?: string;
}

/** See `AvatarSessionOptions.face`. */
export type AvatarFace = 'video' | 'client';

export interface ResolvedOptions {
  /** Undefined: as the job's dispatch asks (dispatchedFace), else video. */
  face?: AvatarFace;
  avatarId?: string;
  avatarImage?: AvatarImage;
  voiceId?: string;
  sessionId?: string;
  mode: AvatarMode;
  apiKey: string;
  apiUrl: string;
  avatarParticipantIdentity?: string;
  connOptions: APIConnectOptions;
  sentenceTokenizer?: tokenize.SentenceTokenizer;
  parkAfterMs: number | null;
  idleTimeoutSeconds?: number;
  maxCapacityWaitSeconds: number;
  playbackTimeoutMs: number;
  interruptGraceMs: number;
}

export const DEFAULT_API_URL = 'http://127.0.0.1:8080';
const DEFAULT_PARK_AFTER_SECONDS = 30;

/** Applies defaults and environment fallbacks; throws VisageException for unusable options. */
export function resolveOptions(o: AvatarSessionOptions): ResolvedOptions {
  const apiKey = o.apiKey || process.env.VISAGE_API_KEY || '';
  if (!apiKey) {
    throw new VisageException(
      'The Visage API key must be set by passing apiKey or the VISAGE_API_KEY environment variable',
    );
  }
  if (!apiKey.startsWith('sk_')) throw new VisageException('apiKey must be a secret key (sk_…)');
  const avatarImage = o.avatarImage;
  const given = [o.avatarId, avatarImage, o.sessionId].filter((x) => x !== undefined && x !== '');
  if (given.length === 0) {
    throw new VisageException('avatarId, avatarImage or sessionId is required');
  }
  if (given.length > 1) {
    throw new VisageException('give only one of avatarId, avatarImage and sessionId');
  }
  if (
    avatarImage !== undefined &&
    !(typeof avatarImage === 'string' ? avatarImage.length > 0 : avatarImage instanceof Uint8Array)
  ) {
    throw new VisageException('avatarImage must be a file path or a Buffer of the picture');
  }
  if (avatarImage instanceof Uint8Array && avatarImage.length === 0) {
    throw new VisageException('avatarImage is empty');
  }
  const mode = o.mode ?? 'text';
  if (mode !== 'text' && mode !== 'audio') {
    throw new VisageException(`mode must be 'text' or 'audio', not '${String(mode)}'`);
  }
  if (mode === 'audio' && o.sentenceTokenizer) {
    throw new VisageException('sentenceTokenizer applies to text mode only');
  }
  const face = o.face;
  if (face !== undefined && face !== 'video' && face !== 'client') {
    throw new VisageException(`face must be 'video' or 'client', not '${String(face)}'`);
  }
  const parkAfterSeconds =
    o.parkAfterSeconds === undefined ? DEFAULT_PARK_AFTER_SECONDS : o.parkAfterSeconds;
  if (parkAfterSeconds !== null && !(parkAfterSeconds > 0)) {
    throw new VisageException('parkAfterSeconds must be a positive number of seconds, or null');
  }
  return {
    face,
    avatarId: o.avatarId,
    avatarImage,
    voiceId: o.voiceId,
    sessionId: o.sessionId,
    mode,
    apiKey,
    apiUrl: o.apiUrl || process.env.VISAGE_API_URL || DEFAULT_API_URL,
    avatarParticipantIdentity: o.avatarParticipantIdentity,
    connOptions: o.connOptions ?? DEFAULT_API_CONNECT_OPTIONS,
    sentenceTokenizer: o.sentenceTokenizer,
    parkAfterMs: parkAfterSeconds === null ? null : parkAfterSeconds * 1000,
    idleTimeoutSeconds: o.idleTimeoutSeconds,
    maxCapacityWaitSeconds: nonNegative(o.maxCapacityWaitSeconds ?? 30, 'maxCapacityWaitSeconds'),
    playbackTimeoutMs: positive(o.playbackTimeoutMs ?? 10_000, 'playbackTimeoutMs'),
    interruptGraceMs: nonNegative(o.interruptGraceMs ?? 2_000, 'interruptGraceMs'),
  };
}

/** LiveKit settings with their environment fallbacks (all optional for Visage). */
export function resolveStartOptions(o: StartOptions): StartOptions {
  return {
    livekitUrl: o.livekitUrl || process.env.LIVEKIT_URL || undefined,
    livekitApiKey: o.livekitApiKey || process.env.LIVEKIT_API_KEY || undefined,
    livekitApiSecret: o.livekitApiSecret || process.env.LIVEKIT_API_SECRET || undefined,
  };
}

function positive(n: number, name: string): number {
  if (!(n > 0)) throw new VisageException(`${name} must be positive`);
  return n;
}

function nonNegative(n: number, name: string): number {
  if (!(n >= 0)) throw new VisageException(`${name} must not be negative`);
  return n;
}
