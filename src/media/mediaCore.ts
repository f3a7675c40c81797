/**
 * The seam between the session manager (HTTP side) and the media core (room, voice, face).
 * The session manager owns state, ordering, limits and timers; a media session owns the avatar
 * in its room and reports back what only it can see (speaking, the room going away).
 */

export interface LiveKitTarget {
  url: string;
  apiKey: string;
  apiSecret: string;
}

export interface MediaSessionSpec {
  sessionId: string;
  avatarId: string;
  voiceId: string;
  /** The speaker profile analysed from the voice's clip; null for stock voices. */
  voiceProfile: unknown;
  roomName: string;
  agentIdentity: string;
  publishOnBehalf: string | null;
  livekit: LiveKitTarget;
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
  /** Stops what is playing and drops everything queued. */
  interrupt(): InterruptOutcome;
  setWaiting(waiting: boolean): void;
  readonly speaking: boolean;
  /** Leaves the room and releases every resource. Idempotent. */
  close(): Promise<void>;
}

export interface MediaCore {
  /** Short description for logs and /healthz, e.g. `livekit` or `none`. */
  readonly kind: string;
  start(spec: MediaSessionSpec, observer: MediaSessionObserver): Promise<MediaSession>;
  close(): Promise<void>;
}

/** Thrown by `start` when the LiveKit server or the media pipeline cannot take the session. */
export class MediaUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MediaUnavailableError';
  }
}
