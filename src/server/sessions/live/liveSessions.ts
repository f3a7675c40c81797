// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import { ID_PREFIXES, newId, type EndReason } from '@visage-avatar/client/api';
import type { MediaCore, MediaEndReason, MediaSession } from '../../../media/mediaCore.js';
import { decodeOrReject } from '../../assets/voiceClip.js';
import type { Limits } from '../../config.js';
import type { LiveKitCredentials } from '../../../media/mediaCore.js';
import { DatabaseUnavailableError } from '../../store/databaseUnavailable.js';
import type { SessionRecord, Store } from '../../store/store.js';
import type {
  DrivingCommand,
  Interrupted,
  StartCommand,
  UtteranceQueued,
} from '../routing/sessionCommand.js';
import { AudioTooLongError, SessionEndedError, SessionWaitingError } from '../sessionErrors.js';
import { startSessionMedia } from './sessionMedia.js';

/** A session this node runs: its media, its timers and the queue that orders its calls. */
export interface LiveSession {
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

export interface LiveSessionsOptions {
  store: Store;
  media: MediaCore;
  limits: Limits;
  livekit: LiveKitCredentials;
  nodeId: string;
  log: Logger;
  /** Told of each end of a session of the key (the create admission forgets its count). */
  keyEnded(keyId: string): void;
}

/**
 * The sessions this node runs: their media, the queue that applies their driving calls in
 * arrival order, the idle and maximum-length timers, and ending (which frees the slot before the
 * media is torn down). Reconciliation ends whatever the store no longer lists as live here, and
 * records the ends the database missed while it was away.
 */
export class LiveSessions {
  private readonly live = new Map<string, LiveSession>();
  /** Sessions whose end is being carried out (their media is being closed). */
  private readonly ending = new Set<string>();
  /** Sessions that ended while the database was unreachable: their end is recorded later. */
  private readonly unrecordedEnds = new Map<string, EndReason>();
  private reconcileTimer: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(private readonly o: LiveSessionsOptions) {}

  get size(): number {
    return this.live.size;
  }

  /** The node is shutting down: it takes no new session. */
  get shuttingDown(): boolean {
    return this.stopping;
  }

  get(id: string): LiveSession | undefined {
    return this.live.get(id);
  }

  /** The session, when this node runs it and it is `keyId`'s. */
  ofKey(keyId: string, id: string): LiveSession | undefined {
    const session = this.live.get(id);
    return session && session.record.keyId === keyId ? session : undefined;
  }

  /**
   * Runs a session placed on this node: its media, its timers, its queue. The session's record
   * as it is once the media runs (a call that waited for the creation may have changed it).
   */
  async launch(record: SessionRecord, start: StartCommand): Promise<SessionRecord> {
    let created!: () => void;
    const session: LiveSession = {
      record,
      media: null,
      chain: new Promise<void>((resolve) => (created = resolve)),
      ending: false,
    };
    this.live.set(record.id, session);
    try {
      session.media = await startSessionMedia(
        this.o,
        record,
        { ...start, livekit: start.callerLiveKit ?? this.o.livekit },
        {
          speakingChanged: () => this.touch(session),
          ended: (reason, detail) => this.mediaEnded(session, reason, detail),
          failed: () => this.end(session, 'error'),
          isEnding: () => session.ending,
        },
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

  /** Queues a call on a session this node runs; calls run one after another, in order. */
  enqueue(
    session: LiveSession,
    kind: DrivingCommand['kind'],
    prepare: () => DrivingCommand | Promise<DrivingCommand>,
  ): Promise<unknown> {
    const id = session.record.id;
    const run = session.chain.then(async () => {
      if (session.ending || !session.media) throw new SessionEndedError(id);
      if ((kind === 'speak' || kind === 'audio') && session.record.status === 'waiting') {
        throw new SessionWaitingError();
      }
      this.touch(session);
      return this.run(session, await prepare());
    });
    session.chain = run.catch(() => undefined);
    return run;
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
        if (audio.durationMs > limit) throw new AudioTooLongError(limit);
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

  /** Ends a session this node runs: its slot is freed first, then its media is torn down. */
  async end(s: LiveSession, reason: EndReason): Promise<void> {
    if (s.ending) return;
    s.ending = true;
    clearTimeout(s.idleTimer);
    clearTimeout(s.maxTimer);
    this.live.delete(s.record.id);
    this.ending.add(s.record.id);
    // Free the slot first: the caller may create a new session the moment we answer.
    const ended = await this.recordEnd(s.record.id, reason);
    // A create that counted before this end must not refuse on that count (createAdmission.ts).
    this.o.keyEnded(s.record.keyId);
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

  /**
   * Ends a session in the store: its record once ended by this call, undefined when the store
   * had ended it already or cannot be reached (then the end is recorded once it is back, by
   * reconciliation, so the slot frees).
   */
  async recordEnd(id: string, reason: EndReason): Promise<SessionRecord | undefined> {
    return this.o.store.endSession(id, reason).catch((err: unknown) => {
      this.o.log.error({ err, session_id: id }, 'could not mark the session ended');
      if (err instanceof DatabaseUnavailableError) this.unrecordedEnds.set(id, reason);
      return undefined;
    });
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
    // Media that closed (or was replaced) while the store answered is not this round's to judge.
    const stillRunning = this.o.media.running();
    for (const [id, media] of running) {
      // A session being ended is closing its media already.
      if (live.has(id) || this.ending.has(id) || stillRunning.get(id) !== media) continue;
      this.o.log.warn({ session_id: id }, 'reconciliation: stopping media of a session not live');
      await media.close().catch((err: unknown) => {
        this.o.log.error({ err, session_id: id }, 'media teardown failed');
      });
    }
  }

  /** Ends every live session (process shutdown); their slots are freed in the database. */
  async shutdown(): Promise<void> {
    this.stopping = true;
    clearInterval(this.reconcileTimer);
    await Promise.all([...this.live.values()].map((s) => this.end(s, 'shutdown')));
  }
}
