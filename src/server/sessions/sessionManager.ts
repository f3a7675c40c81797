// SPDX-License-Identifier: GPL-3.0-or-later
import type { CreateSessionRequest, EndReason, InterruptResult } from '@visage-avatar/client/api';
import type { MediaCore, TimedAtlasUrl } from '../../media/mediaCore.js';
import type { ClaimedCommand } from '../store/clusterStore.js';
import type { ApiKeyRecord, SessionRecord } from '../store/store.js';
import { CreateAdmission } from './creation/createAdmission.js';
import {
  SessionCreation,
  type SessionCreated,
  type SessionCreationOptions,
} from './creation/sessionCreation.js';
import { LiveSessions } from './live/liveSessions.js';
import { mintParticipantToken } from './participantToken.js';
import { OwnerRouting } from './routing/ownerRouting.js';
import type { Interrupted, UtteranceQueued } from './routing/sessionCommand.js';
import {
  ParticipantTokenUnavailableError,
  SessionEndedError,
  SessionNotFoundError,
  type SessionError,
} from './sessionErrors.js';

export type { SessionCreated } from './creation/sessionCreation.js';

/** What the parts need from outside (the facade makes the rest), and the media core. */
export interface SessionManagerOptions extends Omit<
  SessionCreationOptions,
  'admission' | 'live' | 'routing'
> {
  media: MediaCore;
}

/**
 * The sessions API of a node, as the routes and the runtime use it. The work is in three parts:
 * creation/ (creates within the caps, placement), live/ (the sessions this node runs: media,
 * ordered calls, timers, reconciliation) and routing/ (a call on a session another node runs
 * goes to that node; what other nodes hand to this one is applied here). Failures are the
 * domain's errors (sessionErrors.ts); the HTTP edge maps them to answers.
 */
export class SessionManager {
  private readonly live: LiveSessions;
  private readonly routing: OwnerRouting;
  private readonly creation: SessionCreation;
  /** The fast refusal of creates over a key's cap, in front of the exact one (the database's). */
  private readonly admission = new CreateAdmission();

  constructor(private readonly o: SessionManagerOptions) {
    o.store.onKeyChanged((keyId) => this.admission.keyChanged(keyId));
    this.live = new LiveSessions({ ...o, keyEnded: (keyId) => this.admission.ended(keyId) });
    this.routing = new OwnerRouting({
      ...o,
      live: this.live,
      lookup: (key, id) => this.get(key, id),
    });
    this.creation = new SessionCreation({
      ...o,
      admission: this.admission,
      live: this.live,
      routing: this.routing,
    });
  }

  get liveCount(): number {
    return this.live.size;
  }

  /** Creates a session within the caps, on this node or another (creation/sessionCreation.ts). */
  create(
    key: ApiKeyRecord,
    req: CreateSessionRequest,
    secretHash?: string,
    /** `client` mode: the signed atlas URLs the face stream's `start` lines name (by day). */
    atlasUrls?: readonly TimedAtlasUrl[],
  ): Promise<SessionCreated> {
    return this.creation.create(key, req, secretHash, atlasUrls);
  }

  /**
   * The refusal of a create that comes with this secret (its hash), answered before the request
   * is authenticated: its key's live and starting sessions, with `passedOn` more creates on their
   * way to be judged, make its cap (createAdmission.ts). Undefined when the create must go the
   * whole way.
   */
  refusalFromMemory(secretHash: string, passedOn = 0): SessionError | undefined {
    return this.creation.refusalFromMemory(secretHash, passedOn);
  }

  /** Whether a create with this secret was judged here lately (createAdmission.ts). */
  knowsCreateSecret(secretHash: string): boolean {
    return this.admission.knows(secretHash);
  }

  /** Calls `judged` each time a create with this secret is judged; returns the unsubscribe. */
  watchCreateJudgements(secretHash: string, judged: () => void): () => void {
    return this.admission.watchJudgements(secretHash, judged);
  }

  async get(key: ApiKeyRecord, id: string): Promise<SessionRecord> {
    const record = await this.o.store.getSession(key.id, id);
    if (!record) throw new SessionNotFoundError(id);
    return record;
  }

  async speak(key: ApiKeyRecord, id: string, text: string): Promise<string> {
    const r = await this.routing.drive(key, id, 'speak', () => ({ kind: 'speak', text }));
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
    const r = await this.routing.drive(key, id, 'audio', async () => ({
      kind: 'audio',
      ...(await load()),
      text,
    }));
    return (r as UtteranceQueued).utterance_id;
  }

  async interrupt(key: ApiKeyRecord, id: string): Promise<InterruptResult> {
    const r = (await this.routing.drive(key, id, 'interrupt', () => ({
      kind: 'interrupt',
    }))) as Interrupted;
    return { session_id: id, ...r };
  }

  async setWaiting(key: ApiKeyRecord, id: string, waiting: boolean): Promise<SessionRecord> {
    await this.routing.drive(key, id, 'waiting', () => ({ kind: 'waiting', waiting }));
    return this.live.get(id)?.record ?? (await this.get(key, id));
  }

  async participantToken(key: ApiKeyRecord, id: string) {
    const record = await this.get(key, id);
    if (record.status === 'ended') throw new SessionEndedError(id);
    if (record.callerLiveKit || record.livekitUrl !== this.o.livekit.url) {
      throw new ParticipantTokenUnavailableError();
    }
    return mintParticipantToken(
      this.o.livekit,
      record.roomName,
      this.o.limits.participantTokenTtlSeconds,
    );
  }

  /** Ends the session; ending an ended session is not an error. */
  async delete(key: ApiKeyRecord, id: string): Promise<void> {
    const session = this.live.ofKey(key.id, id);
    if (session) {
      await this.live.end(session, 'deleted');
      return;
    }
    const record = await this.get(key, id);
    if (record.status === 'ended') return;
    // Live in the database but not here: a session of another node (or a lost one). Its slot is
    // freed now; the node that runs it is told to stop the avatar at once.
    const ended = await this.o.store.endSession(id, 'deleted');
    if (!ended) return;
    this.admission.ended(key.id);
    await this.routing.endElsewhere(record, 'deleted');
  }

  /**
   * Applies a command that another node handed to this one (cluster.ts calls it; see
   * routing/ownerRouting.ts). Resolves with the reply (JSON).
   */
  apply(c: ClaimedCommand): Promise<unknown> {
    return this.routing.apply(c);
  }

  /**
   * Stops the media of sessions the store has already ended (a key revocation): `reason` is
   * what the store recorded.
   */
  stopEnded(ids: string[], reason: EndReason): Promise<void> {
    return this.live.stopEnded(ids, reason);
  }

  /** Runs `reconcile` every `reconcileIntervalMs` until shutdown. */
  startReconciliation(): void {
    this.live.startReconciliation();
  }

  /** Ends whatever of this node the store no longer lists as live (live/liveSessions.ts). */
  reconcile(): Promise<void> {
    return this.live.reconcile();
  }

  /** Ends every live session (process shutdown); their slots are freed in the database. */
  shutdown(): Promise<void> {
    return this.live.shutdown();
  }
}
