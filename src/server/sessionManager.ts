import type { Logger } from 'pino';
import {
  ID_PREFIXES,
  newId,
  type CreateSessionRequest,
  type EndReason,
  type InterruptResult,
} from '../api/index.js';
import { findAvatar, findStockVoice } from '../media/avatarCatalogue.js';
import {
  MediaUnavailableError,
  type MediaCore,
  type MediaEndReason,
  type MediaSession,
} from '../media/mediaCore.js';
import { ApiError } from './apiError.js';
import type { Limits, LiveKitConfig } from './config.js';
import { mintParticipantToken } from './participantToken.js';
import type { ApiKeyRecord, SessionRecord, Store } from './store/store.js';

/** A session this node runs: its media, its timers and the queue that orders its calls. */
interface LiveSession {
  record: SessionRecord;
  media: MediaSession | null;
  /** Tail of the per-session chain: driving calls run one after another, in arrival order. */
  chain: Promise<unknown>;
  idleTimer?: NodeJS.Timeout;
  maxTimer?: NodeJS.Timeout;
  ending: boolean;
}

export interface SessionManagerOptions {
  store: Store;
  media: MediaCore;
  limits: Limits;
  livekit: LiveKitConfig;
  nodeId: string;
  maxSessions: number;
  log: Logger;
}

export interface CreatedSession {
  record: SessionRecord;
  participantToken: string;
  participantTokenExpiresAt: Date;
  active: number;
  cap: number;
}

/**
 * Owns every live session of this node: creation within the caps, ordered driving calls, the
 * idle and maximum-length timers, and ending (which frees the slot before media teardown).
 */
export class SessionManager {
  private readonly live = new Map<string, LiveSession>();

  constructor(private readonly o: SessionManagerOptions) {}

  get liveCount(): number {
    return this.live.size;
  }

  async create(key: ApiKeyRecord, req: CreateSessionRequest): Promise<CreatedSession> {
    const avatar = findAvatar(req.avatar_id);
    if (!avatar) {
      throw new ApiError('avatar_not_found', `No avatar \`${req.avatar_id}\`.`, {
        param: 'avatar_id',
      });
    }
    const voiceId = req.voice_id ?? avatar.defaultVoice.voiceId;
    const voiceProfile = await this.resolveVoice(key, voiceId);
    const id = newId(ID_PREFIXES.session);
    const body = id.slice(ID_PREFIXES.session.length);
    const idleTimeoutSeconds = req.idle_timeout_seconds ?? this.o.limits.idleTimeoutSeconds;
    const inserted = await this.o.store.insertSessionWithinCaps(
      {
        id,
        keyId: key.id,
        nodeId: this.o.nodeId,
        avatarId: avatar.avatarId,
        voiceId,
        mode: 'video',
        transport: 'livekit',
        livekitUrl: this.o.livekit.url,
        roomName: req.room_name ?? `visage_${body}`,
        agentIdentity: `avatar_${body}`,
        publishOnBehalf: req.publish_on_behalf ?? null,
        idleTimeoutSeconds,
        maxDurationSeconds: this.o.limits.maxDurationSeconds,
      },
      this.o.maxSessions,
    );
    if ('refused' in inserted) throw capacityError(inserted);
    const record = inserted.session;
    const log = this.o.log.child({ session_id: id });
    const session: LiveSession = { record, media: null, chain: Promise.resolve(), ending: false };
    this.live.set(id, session);
    try {
      session.media = await this.o.media.start(
        {
          sessionId: id,
          avatarId: record.avatarId,
          voiceId,
          voiceProfile,
          roomName: record.roomName,
          agentIdentity: record.agentIdentity,
          publishOnBehalf: record.publishOnBehalf,
          livekit: this.o.livekit,
        },
        {
          speakingChanged: () => this.touch(session),
          ended: (reason, detail) => this.mediaEnded(session, reason, detail),
        },
      );
    } catch (err) {
      log.error({ err }, 'media could not start; ending the session');
      await this.end(session, 'error');
      if (err instanceof MediaUnavailableError) {
        throw new ApiError('media_unavailable', 'The media service cannot take the session now.');
      }
      throw err;
    }
    if (session.ending) {
      throw new ApiError('media_unavailable', 'The session ended while its media was starting.');
    }
    session.maxTimer = setTimeout(
      () => void this.end(session, 'max_duration'),
      record.maxDurationSeconds * 1000,
    );
    session.maxTimer.unref();
    this.touch(session);
    const token = await mintParticipantToken(
      this.o.livekit,
      record.roomName,
      this.o.limits.participantTokenTtlSeconds,
    );
    log.info(
      { key_id: key.id, avatar_id: record.avatarId, voice_id: voiceId, room: record.roomName },
      'session created',
    );
    return {
      record,
      participantToken: token.token,
      participantTokenExpiresAt: token.expiresAt,
      active: inserted.active,
      cap: inserted.cap,
    };
  }

  async get(key: ApiKeyRecord, id: string): Promise<SessionRecord> {
    const record = await this.o.store.getSession(key.id, id);
    if (!record) throw new ApiError('session_not_found', `No session \`${id}\`.`);
    return record;
  }

  speak(key: ApiKeyRecord, id: string, text: string): Promise<string> {
    return this.drive(key, id, { speaking: true }, (s) => {
      const utteranceId = newId(ID_PREFIXES.utterance);
      s.media!.speak({ utteranceId, text });
      return utteranceId;
    });
  }

  /** `decode` runs inside the session's queue, so an audio call keeps its place in line. */
  playAudio(
    key: ApiKeyRecord,
    id: string,
    decode: () => Promise<{ pcm: Float32Array; sampleRate: number }>,
    text: string | null,
  ): Promise<string> {
    return this.drive(key, id, { speaking: true }, async (s) => {
      const audio = await decode();
      const utteranceId = newId(ID_PREFIXES.utterance);
      s.media!.playAudio({ utteranceId, ...audio, text });
      return utteranceId;
    });
  }

  interrupt(key: ApiKeyRecord, id: string): Promise<InterruptResult> {
    return this.drive(key, id, {}, (s) => {
      const r = s.media!.interrupt();
      return {
        session_id: id,
        interrupted: r.interrupted,
        dropped_utterances: r.droppedUtterances,
      };
    });
  }

  setWaiting(key: ApiKeyRecord, id: string, waiting: boolean): Promise<SessionRecord> {
    return this.drive(key, id, {}, async (s) => {
      if (waiting) s.media!.interrupt();
      s.media!.setWaiting(waiting);
      const updated = await this.o.store.setSessionWaiting(id, waiting);
      if (updated) s.record = updated;
      this.touch(s);
      return s.record;
    });
  }

  async participantToken(key: ApiKeyRecord, id: string) {
    const record = await this.get(key, id);
    if (record.status === 'ended') throw endedError(id);
    return mintParticipantToken(
      this.o.livekit,
      record.roomName,
      this.o.limits.participantTokenTtlSeconds,
    );
  }

  /** Ends the session; ending an ended session is not an error. */
  async delete(key: ApiKeyRecord, id: string): Promise<void> {
    const session = this.live.get(id);
    if (session && session.record.keyId === key.id) {
      await this.end(session, 'deleted');
      return;
    }
    const record = await this.get(key, id);
    // Live in the database but not here: a session of another node or a lost one; end it there.
    if (record.status !== 'ended') await this.o.store.endSession(id, 'deleted');
  }

  /** Ends every live session (process shutdown); their slots are freed in the database. */
  async shutdown(): Promise<void> {
    await Promise.all([...this.live.values()].map((s) => this.end(s, 'shutdown')));
  }

  private async resolveVoice(key: ApiKeyRecord, voiceId: string): Promise<unknown> {
    if (findStockVoice(voiceId)) return null;
    const voice = voiceId.startsWith(ID_PREFIXES.clonedVoice)
      ? await this.o.store.getVoice(key.id, voiceId)
      : undefined;
    if (!voice) {
      throw new ApiError('voice_not_found', `No voice \`${voiceId}\`.`, { param: 'voice_id' });
    }
    return voice.profile;
  }

  private async drive<T>(
    key: ApiKeyRecord,
    id: string,
    opts: { speaking?: boolean },
    op: (s: LiveSession) => T | Promise<T>,
  ): Promise<T> {
    const session = this.live.get(id);
    if (!session || session.record.keyId !== key.id) {
      const record = await this.get(key, id);
      // Known to the database but not live here: it has ended (or lives on another node).
      throw record.status === 'ended'
        ? endedError(id)
        : new ApiError('media_unavailable', 'The session is not running on this node.');
    }
    const run = session.chain.then(async () => {
      if (session.ending || !session.media) throw endedError(id);
      if (opts.speaking && session.record.status === 'waiting') {
        throw new ApiError(
          'session_waiting',
          'The session is parked: resume it with waiting_state {"waiting": false} first.',
        );
      }
      this.touch(session);
      return op(session);
    });
    session.chain = run.catch(() => undefined);
    return run;
  }

  /** Restarts the idle clock; it runs only while active and silent. */
  private touch(s: LiveSession): void {
    clearTimeout(s.idleTimer);
    if (s.ending || s.record.status !== 'active' || s.media?.speaking) return;
    s.idleTimer = setTimeout(() => {
      if (s.media?.speaking || s.record.status !== 'active') return this.touch(s);
      void this.end(s, 'idle_timeout');
    }, s.record.idleTimeoutSeconds * 1000);
    s.idleTimer.unref();
  }

  private mediaEnded(s: LiveSession, reason: MediaEndReason, detail: string): void {
    this.o.log.warn({ session_id: s.record.id, reason, detail }, 'media ended the session');
    void this.end(s, reason);
  }

  private async end(s: LiveSession, reason: EndReason): Promise<void> {
    if (s.ending) return;
    s.ending = true;
    clearTimeout(s.idleTimer);
    clearTimeout(s.maxTimer);
    this.live.delete(s.record.id);
    // Free the slot first: the caller may create a new session the moment we answer.
    const ended = await this.o.store.endSession(s.record.id, reason).catch((err: unknown) => {
      this.o.log.error({ err, session_id: s.record.id }, 'could not mark the session ended');
      return undefined;
    });
    if (ended) s.record = ended;
    this.o.log.info({ session_id: s.record.id, end_reason: reason }, 'session ended');
    await s.media?.close().catch((err: unknown) => {
      this.o.log.error({ err, session_id: s.record.id }, 'media teardown failed');
    });
  }
}

function endedError(id: string): ApiError {
  return new ApiError('session_ended', `Session \`${id}\` has ended.`);
}

function capacityError(r: { refused: 'concurrency_cap' | 'platform_busy'; cap: number }) {
  const headers = { 'retry-after': '10' };
  return r.refused === 'concurrency_cap'
    ? new ApiError(
        'concurrency_cap',
        `This key is at its cap of ${r.cap} concurrent sessions; end one or wait.`,
        { headers },
      )
    : new ApiError('platform_busy', 'The platform is at capacity; retry shortly.', { headers });
}
