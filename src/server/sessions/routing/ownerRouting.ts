// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import type { EndReason } from '@visage-avatar/client/api';
import { ReplyTimeoutError } from '../../cluster/awaitedReplies.js';
import type { Cluster } from '../../cluster/cluster.js';
import type { ClaimedCommand } from '../../store/clusterStore.js';
import { KeyedSerialQueue } from '../../store/keyedSerialQueue.js';
import type { ApiKeyRecord, SessionRecord, Store } from '../../store/store.js';
import type { LiveSessions } from '../live/liveSessions.js';
import { SessionEndedError, SessionError, SessionUnavailableError } from '../sessionErrors.js';
import {
  commandFromRow,
  commandRow,
  resultOf,
  type DrivingCommand,
  type StartCommand,
} from './sessionCommand.js';

/** Sessions of other nodes whose owner this node remembers (see rememberOwner). */
const MAX_REMEMBERED_OWNERS = 10_000;

export interface OwnerRoutingOptions {
  store: Store;
  /** This node's sessions: a call on one of them is queued here. */
  live: LiveSessions;
  nodeId: string;
  log: Logger;
  /** The nodes sharing a PostgreSQL server (absent on the embedded store: every session is here). */
  cluster?: Cluster;
  /** The session of this key, or SessionNotFoundError. */
  lookup(key: ApiKeyRecord, id: string): Promise<SessionRecord>;
}

/**
 * How a call reaches the node that owns its session. A driving call on a session this node runs
 * is queued on it (live/liveSessions.ts); one on a session another node runs is handed to that
 * node through the cluster (cluster/cluster.ts), in arrival order, and its answer comes back.
 * The other way round, `apply` carries out what other nodes hand to this one: a start of a
 * session placed here, an end, a driving call.
 */
export class OwnerRouting {
  /**
   * Calls this node hands to other nodes, per session: each is stored after the previous one,
   * so they keep their arrival order.
   */
  private readonly forwarded = new KeyedSerialQueue();
  /** The key and node of sessions other nodes run, once looked up (they never change). */
  private readonly owners = new Map<string, { keyId: string; nodeId: string }>();

  constructor(private readonly o: OwnerRoutingOptions) {}

  /**
   * A driving call: queued on the session when this node runs it, handed to the node that runs
   * it otherwise. `prepare` (reading the request's audio) runs in the queue.
   */
  drive(
    key: ApiKeyRecord,
    id: string,
    kind: DrivingCommand['kind'],
    prepare: () => DrivingCommand | Promise<DrivingCommand>,
  ): Promise<unknown> {
    const session = this.o.live.ofKey(key.id, id);
    if (session) return this.o.live.enqueue(session, kind, prepare);
    // Not run here: looked up and handed over in arrival order (the lookup is in the queue too).
    return this.forward(key, id, kind, prepare);
  }

  /**
   * Tells the node that runs a session whose slot was just freed (deleted, or its create
   * failed) to stop its avatar at once; nothing when this node runs it or there is no cluster.
   */
  async endElsewhere(record: SessionRecord, reason: EndReason): Promise<void> {
    if (!this.o.cluster || record.nodeId === this.o.nodeId) return;
    const end = commandRow({ kind: 'end', reason });
    await this.o.cluster.send({ sessionId: record.id, nodeId: record.nodeId, ...end }).catch(
      () => undefined, // its reconciliation stops the avatar anyway
    );
  }

  /**
   * Applies a command that another node handed to this one (cluster.ts): a start, an end, or a
   * driving call, queued on its session at once so that commands keep the order they came in.
   * Resolves with the reply (JSON); rejects with the SessionError the call would have answered.
   */
  apply(c: ClaimedCommand): Promise<unknown> {
    const command = commandFromRow(c);
    const { live } = this.o;
    switch (command.kind) {
      case 'start':
        return this.startPlacedHere(c.sessionId, command);
      case 'end': {
        const session = live.get(c.sessionId);
        return session ? live.end(session, command.reason).then(() => ({})) : Promise.resolve({});
      }
      default: {
        const session = live.get(c.sessionId);
        if (!session) return Promise.reject(new SessionEndedError(c.sessionId));
        return live.enqueue(session, command.kind, () => command);
      }
    }
  }

  /** A session another node placed on this one (inside its create): its media starts here. */
  private async startPlacedHere(id: string, start: StartCommand): Promise<unknown> {
    const record = await this.o.store.getSessionById(id);
    if (!record || record.status === 'ended' || record.nodeId !== this.o.nodeId) {
      throw new SessionUnavailableError('The session ended before its media could start.');
    }
    if (this.o.live.shuttingDown) {
      await this.o.store.endSession(id, 'shutdown').catch(() => undefined);
      throw new SessionUnavailableError('The node chosen for the session is shutting down; retry.');
    }
    await this.o.live.launch(record, start);
    return {};
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
        const record = await this.o.lookup(key, id);
        if (record.status === 'ended') throw new SessionEndedError(id);
        // Started here meanwhile (a call that waited behind a create of this node).
        const session = this.o.live.get(id);
        if (session) return { local: this.o.live.enqueue(session, kind, prepare) };
        if (!this.o.cluster || record.nodeId === this.o.nodeId) {
          // Live in the database, on this node, but not here: a leftover reconciliation ends.
          throw new SessionUnavailableError('The session is not running on this node.');
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
      throw new SessionUnavailableError('The node that runs the session did not answer in time.');
    }
    try {
      // The node was lost meanwhile: the sweep ended the session.
      return resultOf(answer, () => new SessionEndedError(id));
    } catch (err) {
      if (err instanceof SessionError && err.code === 'session_ended') this.owners.delete(id);
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
}
