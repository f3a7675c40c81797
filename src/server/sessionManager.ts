import type { Logger } from 'pino';
import {
  CAPACITY_RETRY_AFTER_SECONDS,
  HEADERS,
  ID_PREFIXES,
  newId,
  randomBase62,
  type CreateSessionRequest,
  type EndReason,
  type InterruptResult,
} from '../api/index.js';
import { findAvatar, findStockVoice } from '../media/avatarCatalogue.js';
import {
  MediaJoinRefusedError,
  MediaUnavailableError,
  type MediaCore,
  type MediaEndReason,
  type MediaSession,
  type MediaSessionSpec,
} from '../media/mediaCore.js';
import { ApiError } from './apiError.js';
import { resolveCallerLiveKit, type ResolvedCallerLiveKit } from './callerLiveKit.js';
import type { Limits, LiveKitConfig } from './config.js';
import { mintParticipantToken } from './participantToken.js';
import { StageTimeoutError, withinDeadline } from './stageDeadline.js';
import type { ApiKeyRecord, CapacityRefusal, SessionRecord, Store } from './store/store.js';

/** A session this node runs: its media, its timers and the queue that orders its calls. */
interface LiveSession {
  record: SessionRecord;
  media: MediaSession | null;
  /**
   * Tail of the per-session chain: driving calls run one after another, in arrival order. It
   * starts with the creation itself, so a call that arrives while the media starts waits for it.
   */
  chain: Promise<unknown>;
  idleTimer?: NodeJS.Timeout;
  maxTimer?: NodeJS.Timeout;
  ending: boolean;
  /** The caller brought the LiveKit (and the avatar's token): Visage mints no tokens for it. */
  callerLiveKit: boolean;
}

export interface SessionManagerOptions {
  store: Store;
  media: MediaCore;
  limits: Limits;
  livekit: LiveKitConfig;
  nodeId: string;
  maxSessions: number;
  /** The outbound address policy, applied to a caller's `livekit.url` too. */
  allowPrivateUrls: boolean;
  log: Logger;
}

/** Seconds a room may outlast its session's maximum length before the LiveKit server closes it. */
const ROOM_TIMEOUT_MARGIN_SECONDS = 60;

export interface CreatedSession {
  record: SessionRecord;
  /** Absent when the caller brought its own LiveKit: the caller mints that room's tokens. */
  participantToken: { token: string; expiresAt: Date } | null;
}

/**
 * Owns every live session of this node: creation within the caps, ordered driving calls, the
 * idle and maximum-length timers, and ending (which frees the slot before media teardown).
 */
export class SessionManager {
  private readonly live = new Map<string, LiveSession>();
  private reconcileTimer: NodeJS.Timeout | undefined;

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
    const voice = await this.resolveVoice(key, voiceId);
    const caller = req.livekit ? await this.resolveCallerLiveKit(req) : null;
    const id = newId(ID_PREFIXES.session);
    const body = id.slice(ID_PREFIXES.session.length);
    const idleTimeoutSeconds = req.idle_timeout_seconds ?? this.o.limits.idleTimeoutSeconds;
    const log = this.o.log.child({ session_id: id });
    const inserted = await withinDeadline(
      this.o.store.insertSessionWithinCaps(
        {
          id,
          keyId: key.id,
          nodeId: this.o.nodeId,
          avatarId: avatar.avatarId,
          voiceId,
          mode: 'video',
          transport: 'livekit',
          livekitUrl: caller?.url ?? this.o.livekit.url,
          // Visage's own room names are random: knowing a session id gives no way into its room.
          roomName: caller?.roomName ?? req.room_name ?? `visage_${randomBase62(24)}`,
          agentIdentity: caller?.identity ?? `avatar_${body}`,
          publishOnBehalf: caller ? caller.publishOnBehalf : (req.publish_on_behalf ?? null),
          idleTimeoutSeconds,
          maxDurationSeconds: this.o.limits.maxDurationSeconds,
        },
        this.o.maxSessions,
      ),
      this.o.limits.createStageTimeoutMs,
      'saving the session',
      (late) => {
        // Committed after the client was told 503: free the slot it took.
        if ('session' in late) void this.o.store.endSession(id, 'error').catch(() => undefined);
      },
    ).catch((err: unknown) => {
      if (!(err instanceof StageTimeoutError)) throw err;
      log.error({ err }, 'the session could not be saved in time');
      throw new ApiError('media_unavailable', `The session could not be created: ${err.message}.`);
    });
    if ('refused' in inserted) throw refusalError(inserted);
    const record = inserted.session;
    let created!: () => void;
    const session: LiveSession = {
      record,
      media: null,
      chain: new Promise<void>((resolve) => (created = resolve)),
      ending: false,
      callerLiveKit: caller !== null,
    };
    this.live.set(id, session);
    try {
      session.media = await this.startMedia(
        session,
        voice,
        caller ? { url: caller.url, token: caller.token } : this.o.livekit,
        caller === null && req.room_name === undefined,
      );
    } finally {
      created();
    }
    session.maxTimer = setTimeout(
      () => void this.end(session, 'max_duration'),
      record.maxDurationSeconds * 1000,
    );
    session.maxTimer.unref();
    this.touch(session);
    const token = caller
      ? null
      : await mintParticipantToken(
          this.o.livekit,
          record.roomName,
          this.o.limits.participantTokenTtlSeconds,
        );
    log.info(
      {
        key_id: key.id,
        avatar_id: record.avatarId,
        voice_id: voiceId,
        room: record.roomName,
        livekit: caller ? 'caller' : 'own',
      },
      'session created',
    );
    return {
      // A driving call that waited for the creation (waiting_state) may have changed it already.
      record: session.record,
      participantToken: token,
    };
  }

  /**
   * Starts the session's media within its bound. The create path owns what it started: media
   * that comes up after the session ended (deleted, timed out, the room gone) is torn down here.
   */
  private async startMedia(
    session: LiveSession,
    voice: { engine: string; profile: unknown },
    livekit: MediaSessionSpec['livekit'],
    ownsRoom: boolean,
  ): Promise<MediaSession> {
    const { record } = session;
    const log = this.o.log.child({ session_id: record.id });
    const closeLeftover = (media: MediaSession) => {
      log.warn('media came up after its session ended; stopping it');
      void media.close().catch((err: unknown) => log.error({ err }, 'media teardown failed'));
    };
    let media: MediaSession;
    try {
      media = await withinDeadline(
        this.o.media.start(
          {
            sessionId: record.id,
            avatarId: record.avatarId,
            voiceId: record.voiceId,
            voiceEngine: voice.engine,
            voiceProfile: voice.profile,
            roomName: record.roomName,
            agentIdentity: record.agentIdentity,
            publishOnBehalf: record.publishOnBehalf,
            livekit,
            roomTimeoutSeconds: record.maxDurationSeconds + ROOM_TIMEOUT_MARGIN_SECONDS,
            ownsRoom,
          },
          {
            speakingChanged: () => this.touch(session),
            ended: (reason, detail) => this.mediaEnded(session, reason, detail),
          },
        ),
        this.o.limits.createStageTimeoutMs,
        'starting the avatar',
        closeLeftover,
      );
    } catch (err) {
      log.error({ err }, 'media could not start; ending the session');
      await this.end(session, 'error');
      if (session.callerLiveKit && err instanceof MediaJoinRefusedError) {
        throw new ApiError(
          'invalid_livekit_token',
          'The LiveKit server at `livekit.url` refused `livekit.token`.',
          { param: 'livekit.token' },
        );
      }
      if (err instanceof MediaUnavailableError || err instanceof StageTimeoutError) {
        throw new ApiError(
          'media_unavailable',
          `The media service cannot take the session now: ${err.message}.`,
        );
      }
      throw err;
    }
    if (session.ending) {
      closeLeftover(media);
      throw new ApiError('media_unavailable', 'The session ended while its media was starting.');
    }
    return media;
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
    return this.drive(key, id, {}, async (s) => {
      const r = await s.media!.interrupt();
      return {
        session_id: id,
        interrupted: r.interrupted,
        dropped_utterances: r.droppedUtterances,
      };
    });
  }

  setWaiting(key: ApiKeyRecord, id: string, waiting: boolean): Promise<SessionRecord> {
    return this.drive(key, id, {}, async (s) => {
      if (waiting) await s.media!.interrupt();
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
    const callerLiveKit = this.live.get(id)?.callerLiveKit ?? false;
    if (callerLiveKit || record.livekitUrl !== this.o.livekit.url) {
      throw new ApiError(
        'participant_token_unavailable',
        "This session's room is on the LiveKit the caller brought; mint its tokens there.",
      );
    }
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

  /**
   * Stops the media of sessions the store has already ended (a key revocation): `reason` is
   * what the store recorded.
   */
  async stopEnded(ids: string[], reason: EndReason): Promise<void> {
    const sessions = ids.map((id) => this.live.get(id)).filter((s) => s !== undefined);
    await Promise.all(sessions.map((s) => this.end(s, reason)));
  }

  /** Runs `reconcile` every `reconcileIntervalMs` until shutdown. */
  startReconciliation(): void {
    clearInterval(this.reconcileTimer);
    this.reconcileTimer = setInterval(() => {
      this.reconcile().catch((err: unknown) => this.o.log.error({ err }, 'reconciliation failed'));
    }, this.o.limits.reconcileIntervalMs);
    this.reconcileTimer.unref();
  }

  /**
   * No avatar outlives its session: ends every session and every media session of this node
   * that the store does not list as live (ended by another process, or leaked by a fault).
   */
  async reconcile(): Promise<void> {
    // Snapshots first: anything created after them is not judged by this round.
    const running = this.o.media.running();
    const tracked = [...this.live.values()];
    const live = await this.o.store.liveSessionIdsOnNode(this.o.nodeId);
    for (const s of tracked) {
      if (live.has(s.record.id) || s.ending) continue;
      this.o.log.warn({ session_id: s.record.id }, 'reconciliation: the store ended this session');
      await this.end(s, 'error');
    }
    for (const [id, media] of running) {
      if (live.has(id)) continue;
      this.o.log.warn({ session_id: id }, 'reconciliation: stopping media of a session not live');
      await media.close().catch((err: unknown) => {
        this.o.log.error({ err, session_id: id }, 'media teardown failed');
      });
    }
  }

  /** Ends every live session (process shutdown); their slots are freed in the database. */
  async shutdown(): Promise<void> {
    clearInterval(this.reconcileTimer);
    await Promise.all([...this.live.values()].map((s) => this.end(s, 'shutdown')));
  }

  /**
   * A caller's own LiveKit: room and identity come from its token; `room_name` cannot be given
   * beside it, and `publish_on_behalf` must agree with the token's attribute when both are set.
   */
  private async resolveCallerLiveKit(req: CreateSessionRequest): Promise<ResolvedCallerLiveKit> {
    if (req.room_name !== undefined) {
      throw new ApiError(
        'validation_failed',
        '`room_name` comes from `livekit.token`; leave it out when `livekit` is given.',
        { param: 'room_name' },
      );
    }
    const caller = await resolveCallerLiveKit(req.livekit!, {
      allowPrivate: this.o.allowPrivateUrls,
      ownUrl: this.o.livekit.url,
    });
    const onBehalf = req.publish_on_behalf;
    if (onBehalf !== undefined && caller.publishOnBehalf && onBehalf !== caller.publishOnBehalf) {
      throw new ApiError(
        'invalid_livekit_token',
        "`publish_on_behalf` differs from the token's `lk.publish_on_behalf` attribute.",
        { param: 'publish_on_behalf' },
      );
    }
    return { ...caller, publishOnBehalf: caller.publishOnBehalf ?? onBehalf ?? null };
  }

  /** The voice's engine and what it stored; catalogue voices are espeak's. */
  private async resolveVoice(
    key: ApiKeyRecord,
    voiceId: string,
  ): Promise<{ engine: string; profile: unknown }> {
    if (findStockVoice(voiceId)) return { engine: 'espeak', profile: null };
    const voice = voiceId.startsWith(ID_PREFIXES.clonedVoice)
      ? await this.o.store.getVoice(key.id, voiceId)
      : undefined;
    if (!voice) {
      throw new ApiError('voice_not_found', `No voice \`${voiceId}\`.`, { param: 'voice_id' });
    }
    return { engine: voice.engine, profile: voice.profile };
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
    // Not ended by this call: the store had ended it already (revocation, another process).
    const log = { session_id: s.record.id, end_reason: reason, already_ended: !ended };
    this.o.log.info(log, 'session ended');
    await s.media?.close().catch((err: unknown) => {
      this.o.log.error({ err, session_id: s.record.id }, 'media teardown failed');
    });
  }
}

function endedError(id: string): ApiError {
  return new ApiError('session_ended', `Session \`${id}\` has ended.`);
}

function refusalError(r: CapacityRefusal): ApiError {
  if (r.refused === 'room_not_available') {
    // Whose room it is stays unsaid.
    return new ApiError(
      'room_not_available',
      'This room is in use by another account; choose another `room_name`.',
      { param: 'room_name' },
    );
  }
  const headers = { [HEADERS.retryAfter]: String(CAPACITY_RETRY_AFTER_SECONDS) };
  return r.refused === 'concurrency_cap'
    ? new ApiError(
        'concurrency_cap',
        `This key is at its cap of ${r.cap} concurrent sessions; end one or wait.`,
        { headers },
      )
    : new ApiError('platform_busy', 'The platform is at capacity; retry shortly.', { headers });
}
