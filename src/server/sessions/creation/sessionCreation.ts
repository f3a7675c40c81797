// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import {
  ID_PREFIXES,
  newId,
  randomBase62,
  type CreateSessionRequest,
} from '@visage-avatar/client/api';
import { findStockVoice } from '../../../media/avatarCatalogue.js';
import type { AvatarFaceSpec, TimedAtlasUrl } from '../../../media/mediaCore.js';
import { newCommandId, ReplyTimeoutError } from '../../cluster/awaitedReplies.js';
import type { Cluster } from '../../cluster/cluster.js';
import type { Limits } from '../../config.js';
import type { LiveKitCredentials } from '../../../media/mediaCore.js';
import type {
  ApiKeyRecord,
  AvatarRecord,
  CapacityRefusal,
  Placement,
  SessionRecord,
  Store,
} from '../../store/store.js';
import type { LiveSessions } from '../live/liveSessions.js';
import { mediaStartBoundMs } from '../live/sessionMedia.js';
import { mintParticipantToken } from '../participantToken.js';
import type { OwnerRouting } from '../routing/ownerRouting.js';
import { commandRow, resultOf, type StartCommand } from '../routing/sessionCommand.js';
import {
  AvatarNotFoundError,
  CallerLiveKitError,
  CapacityRefusedError,
  InvalidSessionRequestError,
  RoomNotAvailableError,
  SessionUnavailableError,
  VoiceNotFoundError,
  type SessionError,
} from '../sessionErrors.js';
import { StageTimeoutError, withinDeadline } from '../stageTimeout.js';
import { resolveCallerLiveKit, type ResolvedCallerLiveKit } from './callerLiveKit.js';
import type { CreateAdmission } from './createAdmission.js';
import { CreateStamps } from './createStamps.js';

/**
 * How much longer than a start's own bound (mediaStartBoundMs: the media processes, the avatar, the
 * grace) a node waits for another node to start a session.
 */
const HANDOFF_MARGIN_MS = 5_000;

export interface SessionCreationOptions {
  store: Store;
  limits: Limits;
  livekit: LiveKitCredentials;
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
  /** The fast refusal of creates over a key's cap, in front of the exact one (the database's). */
  admission: CreateAdmission;
  /** Where a session placed on this node runs. */
  live: LiveSessions;
  /** Tells another node to stop a session this create gave up on. */
  routing: OwnerRouting;
}

/** What a create gives the route: the API's answer (`CreatedSession` in src/api) is made from it. */
export interface SessionCreated {
  record: SessionRecord;
  /** Absent when the caller brought its own LiveKit: the caller mints that room's tokens. */
  participantToken: { token: string; expiresAt: Date } | null;
}

/**
 * Creates sessions within the caps: checks the request against the key's avatars and voices
 * and a LiveKit the caller brings, places the session (this node, or in a cluster the
 * least-loaded node with room, chosen inside the transaction that enforces the caps), and starts
 * it there. A create that fails after its session was saved frees the slot before it answers.
 */
export class SessionCreation {
  /** The refusals from memory given lately, by their count (`refusalFromMemory`). */
  private readonly capRefusals = new Map<string, SessionError>();

  constructor(private readonly o: SessionCreationOptions) {}

  /**
   * Creates a session within the caps. A create of a key at its cap by the database's last count
   * is refused at once, from memory (createAdmission.ts); the others are checked exactly, in the
   * database, as they are saved.
   */
  async create(
    key: ApiKeyRecord,
    req: CreateSessionRequest,
    secretHash?: string,
    atlasUrls?: readonly TimedAtlasUrl[],
  ): Promise<SessionCreated> {
    const admitted = this.o.admission.enter(key.id, key.concurrencyCap, secretHash);
    if ('refused' in admitted) {
      throw refusalError({ refused: 'concurrency_cap', ...admitted.refused });
    }
    let settled = false;
    const settle = (live?: number) => {
      if (settled) return;
      settled = true;
      this.o.admission.settle(admitted.ticket, live);
    };
    try {
      return await this.createAdmitted(key, req, settle, atlasUrls);
    } finally {
      settle();
    }
  }

  /**
   * The refusal of a create that comes with this secret (its hash), answered before the request
   * is authenticated: its key is at its cap by the database's last count (createAdmission.ts).
   * Undefined when the create must go the whole way.
   */
  refusalFromMemory(secretHash: string, passedOn = 0): SessionError | undefined {
    const refused = this.o.admission.refusalFor(secretHash, passedOn);
    if (!refused) return undefined;
    // A refusal is a value: the same count gives the same answer. A burst's hundreds of
    // refusals share a few counts, and building an error (its stack) for each cost tens of
    // microseconds apiece on the listener's one thread (docs/health-and-bursts.md).
    const count = `${refused.active}/${refused.cap}/${refused.starting}`;
    let error = this.capRefusals.get(count);
    if (!error) {
      if (this.capRefusals.size >= CAP_REFUSALS_KEPT) this.capRefusals.clear();
      error = refusalError({ refused: 'concurrency_cap', ...refused });
      this.capRefusals.set(count, error);
    }
    return error;
  }

  /** `settle` is told the key's live count once the database has answered the insert. */
  private async createAdmitted(
    key: ApiKeyRecord,
    req: CreateSessionRequest,
    settle: (live?: number) => void,
    atlasUrls: readonly TimedAtlasUrl[] | undefined,
  ): Promise<SessionCreated> {
    const stamps = new CreateStamps();
    // Stock and photo avatars alike are rows of the store (another key's answer 404).
    const avatar = await this.o.store.getAvatar(key.id, req.avatar_id);
    stamps.mark('avatar');
    if (!avatar) throw new AvatarNotFoundError(req.avatar_id);
    if (req.agent_identity !== undefined && req.agent_identity === req.publish_on_behalf) {
      throw new InvalidSessionRequestError(
        "`agent_identity` must differ from `publish_on_behalf`: the avatar would take the agent's place in the room.",
        'agent_identity',
      );
    }
    const voiceId = req.voice_id ?? avatar.defaultVoiceId;
    const voice = await this.resolveVoice(key, voiceId);
    const caller = req.livekit ? await this.resolveCallerLiveKit(req) : null;
    stamps.mark('voice');
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
      ...(atlasUrls !== undefined && req.mode === 'client' ? { atlasUrls } : {}),
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
          mode: req.mode,
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
        stamps,
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
      throw new SessionUnavailableError(`The session could not be created: ${err.message}.`);
    });
    stamps.mark('save');
    settle(inserted.active);
    if ('refused' in inserted || inserted.session.nodeId === this.o.nodeId) handoff?.forget();
    if ('refused' in inserted) throw refusalError(inserted);
    let record = inserted.session;
    let token: Awaited<ReturnType<typeof mintParticipantToken>> | null;
    try {
      if (record.nodeId === this.o.nodeId) record = await this.o.live.launch(record, start);
      else {
        const timeoutMs = mediaStartBoundMs(this.o.limits) + HANDOFF_MARGIN_MS;
        await this.startedElsewhere(record, handoff!.wait('start', record.nodeId, timeoutMs));
      }
      stamps.mark('launch');
      token = caller
        ? null
        : await mintParticipantToken(
            this.o.livekit,
            record.roomName,
            this.o.limits.participantTokenTtlSeconds,
          );
      stamps.mark('mint');
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
    if (log.isLevelEnabled('debug')) log.debug({ ms: stamps.phases() }, 'create timing');
    // A driving call that waited for the creation (waiting_state) may have changed it already.
    return { record, participantToken: token };
  }

  /** A session placed on another node: waits until that node has its media running. */
  private async startedElsewhere(record: SessionRecord, reply: Promise<unknown>): Promise<void> {
    try {
      resultOf(
        await reply,
        () => new SessionUnavailableError('The node chosen for the session went away; retry.'),
      );
    } catch (err) {
      if (!(err instanceof ReplyTimeoutError)) throw err;
      this.o.log.error({ err, session_id: record.id, node: record.nodeId }, 'no answer to a start');
      // The create frees the slot (abandon); the node stops the avatar if it comes up after all.
      throw new SessionUnavailableError(
        'The node chosen for the session did not start it in time.',
      );
    }
  }

  /**
   * Ends a session whose create failed after it was saved, wherever it runs: here (its media
   * stops), or on another node (the store frees the slot now; that node is told to stop the
   * avatar, and its reconciliation would anyway). With the database away, the end is recorded
   * once it is back.
   */
  private async abandon(record: SessionRecord): Promise<void> {
    const live = this.o.live.get(record.id);
    if (live) {
      await this.o.live.end(live, 'error');
      return;
    }
    const ended = await this.o.live.recordEnd(record.id, 'error');
    if (!ended) return;
    this.o.admission.ended(record.keyId);
    this.o.log.info(
      { session_id: record.id, end_reason: 'error', node: record.nodeId },
      'session ended: its create failed',
    );
    await this.o.routing.endElsewhere(record, 'error');
  }

  /**
   * A caller's own LiveKit: room and identity come from its token; `room_name` cannot be given
   * beside it, and `publish_on_behalf` must agree with the token's attribute when both are set.
   */
  private async resolveCallerLiveKit(req: CreateSessionRequest): Promise<ResolvedCallerLiveKit> {
    for (const param of ['room_name', 'agent_identity'] as const) {
      if (req[param] === undefined) continue;
      throw new InvalidSessionRequestError(
        `\`${param}\` comes from \`livekit.token\`; leave it out when \`livekit\` is given.`,
        param,
      );
    }
    const caller = await resolveCallerLiveKit(req.livekit!, {
      allowPrivate: this.o.allowPrivateUrls,
      ownUrl: this.o.livekit.url,
    });
    const onBehalf = req.publish_on_behalf;
    if (onBehalf !== undefined && caller.publishOnBehalf && onBehalf !== caller.publishOnBehalf) {
      throw new CallerLiveKitError(
        'invalid_livekit_token',
        "`publish_on_behalf` differs from the token's `lk.publish_on_behalf` attribute.",
        'publish_on_behalf',
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
    if (!voice) throw new VoiceNotFoundError(voiceId);
    return { engine: voice.engine, profile: voice.profile };
  }
}

/** Counts whose refusal is kept: a node's keys at their caps have a handful between them. */
const CAP_REFUSALS_KEPT = 64;

/** What the renderer needs of an avatar record: its design, or its photo build. */
function faceOf(avatar: AvatarRecord): AvatarFaceSpec {
  if (avatar.source === 'photo' && avatar.buildBlobId) {
    return { source: 'photo', buildId: avatar.buildBlobId };
  }
  if (avatar.source === 'stock' && avatar.design) return { source: 'stock', design: avatar.design };
  throw new Error(`avatar ${avatar.id} has nothing to render`);
}

function refusalError(r: CapacityRefusal & { starting?: number }): SessionError {
  return r.refused === 'room_not_available'
    ? new RoomNotAvailableError()
    : new CapacityRefusedError(r.refused, r.active, r.cap, r.starting);
}
