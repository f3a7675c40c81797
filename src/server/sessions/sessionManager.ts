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
} from '../../api/index.js';
import { findStockVoice } from '../../media/avatarCatalogue.js';
import {
  MediaJoinRefusedError,
  MediaUnavailableError,
  type AvatarFaceSpec,
  type MediaCore,
  type MediaEndReason,
  type MediaSession,
  type MediaSessionSpec,
} from '../../media/mediaCore.js';
import { ApiError } from '../http/apiError.js';
import { CreateAdmission } from './createAdmission.js';
import { resolveCallerLiveKit, type ResolvedCallerLiveKit } from './callerLiveKit.js';
import { newCommandId, ReplyTimeoutError, type Cluster } from '../cluster/cluster.js';
import type { Limits, LiveKitConfig } from '../config.js';
import { mintParticipantToken } from './participantToken.js';
import {
  commandFromRow,
  commandRow,
  resultOf,
  type DrivingCommand,
  type StartCommand,
} from './sessionCommand.js';
import { StageTimeoutError, withinDeadline } from './stageTimeout.js';
import { DatabaseUnavailableError } from '../store/databaseUnavailable.js';
import type { ClaimedCommand } from '../store/clusterStore.js';
import type {
  ApiKeyRecord,
  AvatarRecord,
  CapacityRefusal,
  Placement,
  SessionRecord,
  Store,
} from '../store/store.js';
import { KeyedSerialQueue } from '../store/keyedSerialQueue.js';
import { decodeOrReject } from '../assets/voiceClip.js';

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
}

/** The results of driving calls, as they travel between nodes (JSON). */
interface UtteranceQueued {
  utterance_id: string;
}
interface Interrupted {
  interrupted: boolean;
  dropped_utterances: number;
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
  /**
   * The nodes sharing a PostgreSQL server (absent on the embedded store): sessions are placed
   * on any of them, and calls on sessions another node runs are handed to it.
   */
  cluster?: Cluster;
}

/** Seconds a room may outlast its session's maximum length before the LiveKit server closes it. */
const ROOM_TIMEOUT_MARGIN_SECONDS = 60;
/** Sessions of other nodes whose owner this node remembers (see rememberOwner). */
const MAX_REMEMBERED_OWNERS = 10_000;
/** How much longer than a start's own bound a node waits for another node to start a session. */
const HANDOFF_MARGIN_MS = 5_000;
/**
 * After a media start overran its bound, the create still waits up to this share of the bound
 * for that start to come up and be torn down before it answers 503: a client that retries at
 * once with the same avatar identity must not find the abandoned avatar joining the room.
 */
const LATE_MEDIA_GRACE_SHARE = 0.5;

export interface CreatedSession {
  record: SessionRecord;
  /** Absent when the caller brought its own LiveKit: the caller mints that room's tokens. */
  participantToken: { token: string; expiresAt: Date } | null;
}

/**
 * Owns every live session of this node: creation within the caps, ordered driving calls, the
 * idle and maximum-length timers, and ending (which frees the slot before media teardown). In a
 * cluster it places new sessions on any node, hands calls on sessions other nodes run to them,
 * and applies the calls other nodes hand to it (`apply`).
 */
export class SessionManager {
  private readonly live = new Map<string, LiveSession>();
  /**
   * Calls this node hands to other nodes, per session: each is stored after the previous one,
   * so they keep their arrival order.
   */
  private readonly forwarded = new KeyedSerialQueue();
  /** The key and node of sessions other nodes run, once looked up (they never change). */
  private readonly owners = new Map<string, { keyId: string; nodeId: string }>();
  private reconcileTimer: NodeJS.Timeout | undefined;
  private shuttingDown = false;
  /** Sessions whose end is being carried out (their media is being closed). */
  private readonly ending = new Set<string>();
  /** Sessions that ended while the database was unreachable: their end is recorded later. */
  private readonly unrecordedEnds = new Map<string, EndReason>();
  /** The fast refusal of creates over a key's cap, in front of the exact one (the database's). */
  private readonly admission = new CreateAdmission();

  constructor(private readonly o: SessionManagerOptions) {
    o.store.onKeyChanged((keyId) => this.admission.keyChanged(keyId));
  }

  get liveCount(): number {
    return this.live.size;
  }

  /**
   * Creates a session within the caps. A create of a key at its cap by the database's last count
   * is refused at once, from memory (createAdmission.ts); the others are checked exactly, in the
   * database, as they are saved.
   */
  async create(
    key: ApiKeyRecord,
    req: CreateSessionRequest,
    secretHash?: string,
  ): Promise<CreatedSession> {
    const admitted = await this.admission.enter(key.id, key.concurrencyCap, secretHash);
    if ('refused' in admitted) {
      throw refusalError({ refused: 'concurrency_cap', ...admitted.refused });
    }
    let settled = false;
    const settle = (live?: number) => {
      if (settled) return;
      settled = true;
      this.admission.settle(admitted.ticket, live);
    };
    try {
      return await this.createAdmitted(key, req, settle);
    } finally {
      settle();
    }
  }

  /**
   * The refusal of a create that comes with this secret (its hash), answered before the request
   * is authenticated: its key is at its cap by the database's last count (createAdmission.ts).
   * Undefined when the create must go the whole way.
   */
  refusalFromMemory(secretHash: string): ApiError | undefined {
    const refused = this.admission.refusalFor(secretHash);
    return refused && refusalError({ refused: 'concurrency_cap', ...refused });
  }

  /** `settle` is told the key's live count once the database has answered the insert. */
  private async createAdmitted(
    key: ApiKeyRecord,
    req: CreateSessionRequest,
    settle: (live?: number) => void,
  ): Promise<CreatedSession> {
    // Stock and photo avatars alike are rows of the store (another key's answer 404).
    const avatar = await this.o.store.getAvatar(key.id, req.avatar_id);
    if (!avatar) {
      throw new ApiError('avatar_not_found', `No avatar \`${req.avatar_id}\`.`, {
        param: 'avatar_id',
      });
    }
    if (req.agent_identity !== undefined && req.agent_identity === req.publish_on_behalf) {
      throw new ApiError(
        'validation_failed',
        "`agent_identity` must differ from `publish_on_behalf`: the avatar would take the agent's place in the room.",
        { param: 'agent_identity' },
      );
    }
    const voiceId = req.voice_id ?? avatar.defaultVoiceId;
    const voice = await this.resolveVoice(key, voiceId);
    const caller = req.livekit ? await this.resolveCallerLiveKit(req) : null;
    const id = newId(ID_PREFIXES.session);
    const body = id.slice(ID_PREFIXES.session.length);
    const idleTimeoutSeconds = req.idle_timeout_seconds ?? this.o.limits.idleTimeoutSeconds;
    const log = this.o.log.child({ session_id: id });
    const start: StartCommand = {
      kind: 'start',
      face: faceOf(avatar),
      voice,
      callerLiveKit: caller ? { url: caller.url, token: caller.token } : null,
      ownsRoom: caller === null && req.room_name === undefined,
    };
    // Placed on another node, it is started there: this node listens for that node's answer
    // from now on, since it may come back before the create transaction's own answer does.
    const handoffId = newCommandId();
    const handoff = this.o.cluster?.expectReply(handoffId);
    const placement: Placement = this.o.cluster
      ? this.o.cluster.placement((session) => ({
          id: handoffId,
          sessionId: session.id,
          nodeId: session.nodeId,
          replyNode: this.o.nodeId,
          ...commandRow(start),
        }))
      : { kind: 'node', nodeId: this.o.nodeId, capacity: this.o.maxSessions };
    const inserted = await withinDeadline(
      this.o.store.insertSessionWithinCaps(
        {
          id,
          keyId: key.id,
          avatarId: avatar.id,
          voiceId,
          mode: 'video',
          transport: 'livekit',
          livekitUrl: caller?.url ?? this.o.livekit.url,
          // Visage's own room names are random: knowing a session id gives no way into its room.
          roomName: caller?.roomName ?? req.room_name ?? `visage_${randomBase62(24)}`,
          agentIdentity: caller?.identity ?? req.agent_identity ?? `avatar_${body}`,
          publishOnBehalf: caller ? caller.publishOnBehalf : (req.publish_on_behalf ?? null),
          callerLiveKit: caller !== null,
          idleTimeoutSeconds,
          maxDurationSeconds: this.o.limits.maxDurationSeconds,
        },
        placement,
      ),
      this.o.limits.createStageTimeoutMs,
      'saving the session',
      (late) => {
        // Committed after the client was told 503: free the slot it took.
        if ('session' in late) void this.o.store.endSession(id, 'error').catch(() => undefined);
      },
    ).catch((err: unknown) => {
      handoff?.forget();
      if (!(err instanceof StageTimeoutError)) throw err;
      log.error({ err }, 'the session could not be saved in time');
      throw new ApiError('media_unavailable', `The session could not be created: ${err.message}.`);
    });
    settle(inserted.active);
    if ('refused' in inserted || inserted.session.nodeId === this.o.nodeId) handoff?.forget();
    if ('refused' in inserted) throw refusalError(inserted);
    let record = inserted.session;
    let token: Awaited<ReturnType<typeof mintParticipantToken>> | null;
    try {
      if (record.nodeId === this.o.nodeId) record = await this.launch(record, start);
      else {
        const timeoutMs = this.o.limits.createStageTimeoutMs + HANDOFF_MARGIN_MS;
        await this.startedElsewhere(record, handoff!.wait('start', record.nodeId, timeoutMs));
      }
      token = caller
        ? null
        : await mintParticipantToken(
            this.o.livekit,
            record.roomName,
            this.o.limits.participantTokenTtlSeconds,
          );
    } catch (err) {
      // The client is not told of the session, so it must not hold a slot.
      await this.abandon(record);
      throw err;
    }
    log.info(
      {
        key_id: key.id,
        avatar_id: record.avatarId,
        voice_id: voiceId,
        room: record.roomName,
        livekit: caller ? 'caller' : 'own',
        node: record.nodeId,
      },
      'session created',
    );
    // A driving call that waited for the creation (waiting_state) may have changed it already.
    return { record, participantToken: token };
  }

  /**
   * Runs a session placed on this node: its media, its timers, its queue. The session's record
   * as it is once the media runs (a call that waited for the creation may have changed it).
   */
  private async launch(record: SessionRecord, start: StartCommand): Promise<SessionRecord> {
    let created!: () => void;
    const session: LiveSession = {
      record,
      media: null,
      chain: new Promise<void>((resolve) => (created = resolve)),
      ending: false,
    };
    this.live.set(record.id, session);
    try {
      session.media = await this.startMedia(
        session,
        start.face,
        start.voice,
        start.callerLiveKit ?? this.o.livekit,
        start.ownsRoom,
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
    return session.record;
  }

  /**
   * Ends a session whose create failed after it was saved, wherever it runs: here (its media
   * stops), or on another node (the store frees the slot now; that node is told to stop the
   * avatar, and its reconciliation would anyway). With the database away, the end is recorded
   * once it is back.
   */
  private async abandon(record: SessionRecord): Promise<void> {
    const live = this.live.get(record.id);
    if (live) {
      await this.end(live, 'error');
      return;
    }
    const ended = await this.o.store.endSession(record.id, 'error').catch((err: unknown) => {
      this.o.log.error({ err, session_id: record.id }, 'could not mark the session ended');
      if (err instanceof DatabaseUnavailableError) this.unrecordedEnds.set(record.id, 'error');
      return undefined;
    });
    if (ended) {
      this.admission.ended(record.keyId);
      this.o.log.info(
        { session_id: record.id, end_reason: 'error', node: record.nodeId },
        'session ended: its create failed',
      );
    }
    if (ended && this.o.cluster && record.nodeId !== this.o.nodeId) {
      const end = commandRow({ kind: 'end', reason: 'error' });
      await this.o.cluster.send({ sessionId: record.id, nodeId: record.nodeId, ...end }).catch(
        () => undefined, // its reconciliation stops the avatar anyway
      );
    }
  }

  /** A session placed on another node: waits until that node has its media running. */
  private async startedElsewhere(record: SessionRecord, reply: Promise<unknown>): Promise<void> {
    try {
      resultOf(
        await reply,
        () =>
          new ApiError('media_unavailable', 'The node chosen for the session went away; retry.'),
      );
    } catch (err) {
      if (!(err instanceof ReplyTimeoutError)) throw err;
      this.o.log.error({ err, session_id: record.id, node: record.nodeId }, 'no answer to a start');
      // The create frees the slot (abandon); the node stops the avatar if it comes up after all.
      throw new ApiError(
        'media_unavailable',
        'The node chosen for the session did not start it in time.',
      );
    }
  }

  /**
   * Starts the session's media within its bound. The create path owns what it started: media
   * that comes up after the session ended (deleted, timed out, the room gone) is torn down here.
   */
  private async startMedia(
    session: LiveSession,
    face: AvatarFaceSpec,
    voice: { engine: string; profile: unknown },
    livekit: MediaSessionSpec['livekit'],
    ownsRoom: boolean,
  ): Promise<MediaSession> {
    const { record } = session;
    const log = this.o.log.child({ session_id: record.id });
    let leftover: Promise<void> | undefined;
    const closeLeftover = (media: MediaSession) => {
      log.warn('media came up after its session ended; stopping it');
      leftover = media.close().catch((err: unknown) => log.error({ err }, 'media teardown failed'));
    };
    let media: MediaSession;
    let starting: Promise<MediaSession> | undefined;
    try {
      media = await withinDeadline(
        (starting = this.o.media.start(
          {
            sessionId: record.id,
            avatarId: record.avatarId,
            avatar: face,
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
        )),
        this.o.limits.createStageTimeoutMs,
        'starting the avatar',
        closeLeftover,
      );
    } catch (err) {
      log.error({ err }, 'media could not start; ending the session');
      await this.end(session, 'error');
      if (err instanceof StageTimeoutError && starting) {
        const graceMs = this.o.limits.createStageTimeoutMs * LATE_MEDIA_GRACE_SHARE;
        await settleLateMedia(starting, () => leftover, graceMs, log);
      }
      if (session.record.callerLiveKit && err instanceof MediaJoinRefusedError) {
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

  async speak(key: ApiKeyRecord, id: string, text: string): Promise<string> {
    const r = await this.drive(key, id, 'speak', () => ({ kind: 'speak', text }));
    return (r as UtteranceQueued).utterance_id;
  }

  /**
   * `load` (reading the body, or the uploaded file) runs inside the session's queue, and the
   * decoding on the node that plays it, so an audio call keeps its place in line.
   */
  async playAudio(
    key: ApiKeyRecord,
    id: string,
    load: () => Promise<{ bytes: Uint8Array; contentType: string | null }>,
    text: string | null,
  ): Promise<string> {
    const r = await this.drive(key, id, 'audio', async () => ({
      kind: 'audio',
      ...(await load()),
      text,
    }));
    return (r as UtteranceQueued).utterance_id;
  }

  async interrupt(key: ApiKeyRecord, id: string): Promise<InterruptResult> {
    const r = (await this.drive(key, id, 'interrupt', () => ({
      kind: 'interrupt',
    }))) as Interrupted;
    return { session_id: id, ...r };
  }

  async setWaiting(key: ApiKeyRecord, id: string, waiting: boolean): Promise<SessionRecord> {
    await this.drive(key, id, 'waiting', () => ({ kind: 'waiting', waiting }));
    return this.live.get(id)?.record ?? (await this.get(key, id));
  }

  async participantToken(key: ApiKeyRecord, id: string) {
    const record = await this.get(key, id);
    if (record.status === 'ended') throw endedError(id);
    if (record.callerLiveKit || record.livekitUrl !== this.o.livekit.url) {
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
    if (record.status === 'ended') return;
    // Live in the database but not here: a session of another node (or a lost one). Its slot is
    // freed now; the node that runs it is told to stop the avatar at once.
    const ended = await this.o.store.endSession(id, 'deleted');
    if (ended) this.admission.ended(key.id);
    if (ended && this.o.cluster && record.nodeId !== this.o.nodeId) {
      const end = commandRow({ kind: 'end', reason: 'deleted' });
      await this.o.cluster.send({ sessionId: id, nodeId: record.nodeId, ...end }).catch(() => {
        // Its reconciliation stops the avatar anyway.
      });
    }
  }

  /**
   * Applies a command that another node handed to this one (cluster.ts): a start, an end, or a
   * driving call, queued on its session at once so that commands keep the order they came in.
   * Resolves with the reply (JSON); rejects with the ApiError the call would have answered.
   */
  apply(c: ClaimedCommand): Promise<unknown> {
    const command = commandFromRow(c);
    switch (command.kind) {
      case 'start':
        return this.startPlacedHere(c.sessionId, command);
      case 'end': {
        const session = this.live.get(c.sessionId);
        return session ? this.end(session, command.reason).then(() => ({})) : Promise.resolve({});
      }
      default: {
        const session = this.live.get(c.sessionId);
        if (!session) return Promise.reject(endedError(c.sessionId));
        return this.enqueue(session, command.kind, () => command);
      }
    }
  }

  private async startPlacedHere(id: string, start: StartCommand): Promise<unknown> {
    const record = await this.o.store.getSessionById(id);
    if (!record || record.status === 'ended' || record.nodeId !== this.o.nodeId) {
      throw new ApiError('media_unavailable', 'The session ended before its media could start.');
    }
    if (this.shuttingDown) {
      await this.o.store.endSession(id, 'shutdown').catch(() => undefined);
      throw new ApiError(
        'media_unavailable',
        'The node chosen for the session is shutting down; retry.',
      );
    }
    await this.launch(record, start);
    return {};
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
   * First, records the ends the database missed while it was unreachable.
   */
  async reconcile(): Promise<void> {
    for (const [id, reason] of this.unrecordedEnds) {
      await this.o.store.endSession(id, reason);
      this.unrecordedEnds.delete(id);
      this.o.log.info(
        { session_id: id, end_reason: reason },
        'recorded an end the database missed',
      );
    }
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
      // A session being ended is closing its media already.
      if (live.has(id) || this.ending.has(id)) continue;
      this.o.log.warn({ session_id: id }, 'reconciliation: stopping media of a session not live');
      await media.close().catch((err: unknown) => {
        this.o.log.error({ err, session_id: id }, 'media teardown failed');
      });
    }
  }

  /** Ends every live session (process shutdown); their slots are freed in the database. */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    clearInterval(this.reconcileTimer);
    await Promise.all([...this.live.values()].map((s) => this.end(s, 'shutdown')));
  }

  /**
   * A caller's own LiveKit: room and identity come from its token; `room_name` cannot be given
   * beside it, and `publish_on_behalf` must agree with the token's attribute when both are set.
   */
  private async resolveCallerLiveKit(req: CreateSessionRequest): Promise<ResolvedCallerLiveKit> {
    for (const param of ['room_name', 'agent_identity'] as const) {
      if (req[param] === undefined) continue;
      throw new ApiError(
        'validation_failed',
        `\`${param}\` comes from \`livekit.token\`; leave it out when \`livekit\` is given.`,
        { param },
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

  /**
   * A driving call: queued on the session when this node runs it, handed to the node that runs
   * it otherwise. `prepare` (reading the request's audio) runs in the queue.
   */
  private drive(
    key: ApiKeyRecord,
    id: string,
    kind: DrivingCommand['kind'],
    prepare: () => DrivingCommand | Promise<DrivingCommand>,
  ): Promise<unknown> {
    const session = this.live.get(id);
    if (session && session.record.keyId === key.id) return this.enqueue(session, kind, prepare);
    // Not run here: looked up and handed over in arrival order (the lookup is in the queue too).
    return this.forward(key, id, kind, prepare);
  }

  /** Queues a call on a session this node runs; calls run one after another, in order. */
  private enqueue(
    session: LiveSession,
    kind: DrivingCommand['kind'],
    prepare: () => DrivingCommand | Promise<DrivingCommand>,
  ): Promise<unknown> {
    const id = session.record.id;
    const run = session.chain.then(async () => {
      if (session.ending || !session.media) throw endedError(id);
      if ((kind === 'speak' || kind === 'audio') && session.record.status === 'waiting') {
        throw new ApiError(
          'session_waiting',
          'The session is parked: resume it with waiting_state {"waiting": false} first.',
        );
      }
      this.touch(session);
      return this.run(session, await prepare());
    });
    session.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * Hands a call to the node that runs the session, after this node's earlier calls on it:
   * each is stored only once the previous one is, so they keep their arrival order.
   */
  private async forward(
    key: ApiKeyRecord,
    id: string,
    kind: DrivingCommand['kind'],
    prepare: () => DrivingCommand | Promise<DrivingCommand>,
  ): Promise<unknown> {
    const posted = this.forwarded.run(id, async () => {
      let nodeId = this.owners.get(id)?.keyId === key.id ? this.owners.get(id)!.nodeId : undefined;
      if (!nodeId) {
        const record = await this.get(key, id);
        if (record.status === 'ended') throw endedError(id);
        // Started here meanwhile (a call that waited behind a create of this node).
        const session = this.live.get(id);
        if (session) return { local: this.enqueue(session, kind, prepare) };
        if (!this.o.cluster || record.nodeId === this.o.nodeId) {
          // Live in the database, on this node, but not here: a leftover reconciliation ends.
          throw new ApiError('media_unavailable', 'The session is not running on this node.');
        }
        nodeId = record.nodeId;
        this.rememberOwner(id, key.id, nodeId);
      }
      const command = commandRow(await prepare());
      const sent = await this.o.cluster!.post({ sessionId: id, nodeId, ...command });
      return { remote: sent.reply, node: nodeId };
    });
    const handed = await posted;
    if ('local' in handed) return handed.local;
    let answer: unknown;
    try {
      answer = await handed.remote;
    } catch (err) {
      if (!(err instanceof ReplyTimeoutError)) throw err;
      this.o.log.warn({ err, session_id: id, node: handed.node, kind }, 'no answer to a call');
      throw new ApiError(
        'media_unavailable',
        'The node that runs the session did not answer in time.',
      );
    }
    try {
      // The node was lost meanwhile: the sweep ended the session.
      return resultOf(answer, () => endedError(id));
    } catch (err) {
      if (err instanceof ApiError && err.code === 'session_ended') this.owners.delete(id);
      throw err;
    }
  }

  /** Who runs a session never changes: later calls skip the lookup (bounded memory). */
  private rememberOwner(id: string, keyId: string, nodeId: string): void {
    if (this.owners.size >= MAX_REMEMBERED_OWNERS) {
      this.owners.delete(this.owners.keys().next().value!);
    }
    this.owners.set(id, { keyId, nodeId });
  }

  /** Applies one driving call to a session this node runs; its result as JSON. */
  private async run(session: LiveSession, c: DrivingCommand): Promise<unknown> {
    const media = session.media!;
    switch (c.kind) {
      case 'speak': {
        const utteranceId = newId(ID_PREFIXES.utterance);
        media.speak({ utteranceId, text: c.text });
        return { utterance_id: utteranceId } satisfies UtteranceQueued;
      }
      case 'audio': {
        const limit = this.o.limits.audioPayloadMs;
        const audio = await decodeOrReject(c.bytes, c.contentType ?? undefined, limit);
        if (audio.durationMs > limit) {
          throw new ApiError(
            'clip_too_long',
            `Audio payloads are limited to ${limit / 1000} s; split it.`,
          );
        }
        const utteranceId = newId(ID_PREFIXES.utterance);
        media.playAudio({
          utteranceId,
          pcm: audio.mono,
          sampleRate: audio.sampleRate,
          text: c.text,
        });
        return { utterance_id: utteranceId } satisfies UtteranceQueued;
      }
      case 'interrupt': {
        const r = await media.interrupt();
        return {
          interrupted: r.interrupted,
          dropped_utterances: r.droppedUtterances,
        } satisfies Interrupted;
      }
      case 'waiting': {
        if (c.waiting) await media.interrupt();
        media.setWaiting(c.waiting);
        const updated = await this.o.store.setSessionWaiting(session.record.id, c.waiting);
        if (updated) session.record = updated;
        this.touch(session);
        return {};
      }
    }
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
    this.ending.add(s.record.id);
    // Free the slot first: the caller may create a new session the moment we answer.
    const ended = await this.o.store.endSession(s.record.id, reason).catch((err: unknown) => {
      this.o.log.error({ err, session_id: s.record.id }, 'could not mark the session ended');
      // The database is away: recorded when it is back (reconciliation), so the slot frees.
      if (err instanceof DatabaseUnavailableError) this.unrecordedEnds.set(s.record.id, reason);
      return undefined;
    });
    // A create that counted before this end must not refuse on that count (createAdmission.ts).
    this.admission.ended(s.record.keyId);
    if (ended) s.record = ended;
    // Not ended by this call: the store had ended it already (revocation, another process).
    const log = { session_id: s.record.id, end_reason: reason, already_ended: !ended };
    this.o.log.info(log, 'session ended');
    try {
      await s.media?.close();
    } catch (err) {
      this.o.log.error({ err, session_id: s.record.id }, 'media teardown failed');
    } finally {
      this.ending.delete(s.record.id);
    }
  }
}

/** What the renderer needs of an avatar record: its design, or its photo build. */
function faceOf(avatar: AvatarRecord): AvatarFaceSpec {
  if (avatar.source === 'photo' && avatar.buildBlobId) {
    return { source: 'photo', buildId: avatar.buildBlobId };
  }
  if (avatar.source === 'stock' && avatar.design) return { source: 'stock', design: avatar.design };
  throw new Error(`avatar ${avatar.id} has nothing to render`);
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
  const headers = {
    [HEADERS.retryAfter]: String(CAPACITY_RETRY_AFTER_SECONDS),
    // The count that refused it: the answer needs no second count (routes/sessions.ts).
    [HEADERS.concurrentSessions]: String(r.active),
    [HEADERS.maxConcurrentSessions]: String(r.cap),
  };
  return r.refused === 'concurrency_cap'
    ? new ApiError(
        'concurrency_cap',
        `This key is at its cap of ${r.cap} concurrent ${r.cap === 1 ? 'session' : 'sessions'}; end one or wait.`,
        { headers },
      )
    : new ApiError('platform_busy', 'The platform is at capacity; retry shortly.', { headers });
}

/**
 * Waits, at most `graceMs`, for a media start that overran its bound to come up and be torn down
 * (`teardown`, set by the deadline's late handler), or to fail. Past the grace the create answers
 * anyway; the late handler still stops the media whenever it comes up.
 */
async function settleLateMedia(
  starting: Promise<MediaSession>,
  teardown: () => Promise<void> | undefined,
  graceMs: number,
  log: Logger,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    starting
      .then(
        () => teardown(),
        () => undefined,
      )
      .then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
  ]);
  clearTimeout(timer);
  if (!settled) log.warn({ grace_ms: graceMs }, 'the late media start has not settled; answering');
}
