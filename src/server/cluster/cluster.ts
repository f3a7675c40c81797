// SPDX-License-Identifier: GPL-3.0-or-later
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import {
  nodeChannel,
  parseNodeNotification,
  KEYS_CHANNEL,
  RECONCILE_CHANNEL,
  type ClusterStore,
  type NewCommand,
} from '../store/clusterStore.js';
import type { NotificationListener } from '../store/notificationListener.js';
import { POSTGRES_CONNECT_TIMEOUT_MS } from '../store/postgresDatabase.js';
import type { Placement, Store } from '../store/store.js';
import { AwaitedReplies, newCommandId, type ExpectedReply } from './awaitedReplies.js';
import { CommandInbox, type CommandApplier } from './commandInbox.js';

export type { CommandApplier } from './commandInbox.js';

/**
 * Several `visage serve` nodes on one PostgreSQL server behave as one service. This node:
 *
 * - keeps a row in `cluster_nodes` with its capacity, its running count and a heartbeat;
 * - places new sessions on the least-loaded live node with room (`placement()`, used inside the
 *   create transaction), a node whose media processes are still starting last, and hands a session placed elsewhere to its node with a `start`
 *   command;
 * - hands driving calls on sessions that other nodes run to them (`post`): a row in
 *   `session_commands` plus a NOTIFY; the other node applies its commands in the order they
 *   were inserted and answers each (NOTIFY back), so interrupt's counts come back too
 *   (awaitedReplies.ts waits for those answers);
 * - applies the commands addressed to it (commandInbox.ts, through the `CommandApplier`, the
 *   session manager);
 * - sweeps: a node silent for `lostAfterMs` is declared lost by whichever node holds the sweep
 *   lock, its sessions end `error` and their slots are free;
 * - drains on shutdown (no new placements, then leaves the table).
 *
 * When PostgreSQL goes away, the node keeps its media running, retries, LISTENs again once it is
 * back and looks for the commands it missed.
 */

export interface ClusterTiming {
  /** How often the node proves it is alive (and sweeps). */
  heartbeatMs: number;
  /** Silent this long, a node is declared lost and its sessions end. */
  lostAfterMs: number;
  /** How long a driving call waits for the node that runs the session to answer. */
  replyTimeoutMs: number;
}

export const DEFAULT_CLUSTER_TIMING: ClusterTiming = {
  heartbeatMs: 2_000,
  lostAfterMs: 10_000,
  replyTimeoutMs: 20_000,
};

export interface ClusterOptions {
  store: Store;
  nodeId: string;
  /** Sessions this node runs at most. */
  capacity: number;
  log: Logger;
  timing?: Partial<ClusterTiming>;
  /**
   * Resolves once this node's media core has started; until then the node is placed on only
   * when no other node has room (a session there would wait for the media processes). Default:
   * started.
   */
  mediaStarted?: Promise<unknown>;
}

/** What the sweep answers on behalf of a lost node to the commands it never answered. */
export const NODE_LOST_REPLY = {
  error: { code: 'node_lost', message: 'the node that runs the session was lost' },
} as const;

export class Cluster {
  private readonly timing: ClusterTiming;
  private readonly db: ClusterStore;
  private readonly instance = randomBytes(9).toString('base64url');
  private readonly replies: AwaitedReplies;
  private readonly inbox: CommandInbox;
  private listener: NotificationListener | undefined;
  private applier: CommandApplier | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  /** Since when every heartbeat succeeded (undefined while the database is unreachable). */
  private healthySince: number | undefined;
  /** This node judges others only from then on (see `tick`). */
  private sweepNotBefore = 0;
  private left = false;
  /** Whether this node's media core has started, and whether its row says so yet. */
  private mediaReady: boolean;
  private mediaReadySaved: boolean;

  private constructor(private readonly options: ClusterOptions) {
    if (!options.store.cluster)
      throw new Error('a cluster needs a PostgreSQL server (DATABASE_URL)');
    this.db = options.store.cluster;
    this.timing = { ...DEFAULT_CLUSTER_TIMING, ...options.timing };
    this.replies = new AwaitedReplies(this.db);
    this.inbox = new CommandInbox(this.db, options.nodeId, options.log);
    this.mediaReady = this.mediaReadySaved = options.mediaStarted === undefined;
  }

  get nodeId(): string {
    return this.options.nodeId;
  }

  /**
   * Registers this node and listens for its notifications. A node of the same id that is still
   * alive (heartbeat within `lostAfterMs`) holds the id: after a crash and a quick restart this
   * waits until the predecessor has fallen silent; two live nodes with one id fail to start.
   */
  static async join(o: ClusterOptions): Promise<Cluster> {
    const cluster = new Cluster(o);
    await cluster.register();
    try {
      cluster.listener = await o.store.listen(
        [nodeChannel(o.nodeId), RECONCILE_CHANNEL, KEYS_CHANNEL],
        {
          notification: (channel, payload) => cluster.notified(channel, payload),
          connected: () => cluster.inbox.claim(),
        },
        o.log,
      );
    } catch (err) {
      await cluster.db.deregister(o.nodeId, cluster.instance).catch(() => undefined);
      throw err;
    }
    cluster.healthySince = Date.now();
    cluster.sweepNotBefore = cluster.healthySince + cluster.timing.lostAfterMs;
    cluster.heartbeatTimer = setInterval(() => void cluster.tick(), cluster.timing.heartbeatMs);
    cluster.heartbeatTimer.unref();
    o.mediaStarted?.then(
      () => {
        cluster.mediaReady = true;
        void cluster.saveMediaReady();
      },
      () => undefined, // a node whose media cannot start stops (runtime.ts)
    );
    return cluster;
  }

  /** Starts applying the commands addressed to this node (those waiting included). */
  serve(applier: CommandApplier): void {
    this.applier = applier;
    this.inbox.serve(applier);
  }

  /**
   * Where new sessions go: the least-loaded live node with room; `handoff` makes the command
   * (`replyNode`: this node) that starts a session placed on another node.
   */
  placement(handoff: Extract<Placement, { kind: 'cluster' }>['handoff']): Placement {
    return {
      kind: 'cluster',
      self: this.options.nodeId,
      // A node silent for half the time that declares it lost is probably going away.
      liveWithinMs: this.timing.lostAfterMs / 2,
      handoff,
    };
  }

  /** Hands a command over without waiting for its answer (an `end`: stop the avatar now). */
  async send(c: Omit<NewCommand, 'id' | 'replyNode'>): Promise<void> {
    await this.db.insertCommand({ ...c, id: newCommandId(), replyNode: this.options.nodeId });
  }

  /**
   * Hands a command to the node that runs its session. Resolves once the command is stored
   * (later commands of the caller are ordered after it); `reply` resolves with that node's
   * answer, or rejects with ReplyTimeoutError.
   */
  async post(
    c: Omit<NewCommand, 'id' | 'replyNode'>,
    timeoutMs = this.timing.replyTimeoutMs,
  ): Promise<{ reply: Promise<unknown> }> {
    const id = newCommandId();
    const expected = this.expectReply(id);
    try {
      await this.db.insertCommand({ ...c, id, replyNode: this.options.nodeId });
    } catch (err) {
      expected.forget();
      throw err;
    }
    return { reply: expected.wait(c.kind, c.nodeId, timeoutMs) };
  }

  /**
   * Listens for the reply to command `id` from now on: before the command is inserted, since
   * the reply may come back before the INSERT's own answer does (awaitedReplies.ts).
   */
  expectReply(id: string): ExpectedReply {
    return this.replies.expect(id);
  }

  /** No new sessions are placed here from now on. */
  async drain(): Promise<void> {
    await this.db.setDraining(this.options.nodeId, this.instance).catch((err: unknown) => {
      this.options.log.warn({ err }, 'could not mark this node draining');
    });
  }

  /**
   * Leaves the cluster (after the session manager ended this node's sessions): the commands
   * still addressed here are answered (their sessions have ended), the row is deleted.
   */
  async leave(): Promise<void> {
    if (this.left) return;
    clearInterval(this.heartbeatTimer);
    await this.inbox.claimNow().catch(() => undefined);
    this.left = true;
    this.inbox.close();
    await this.listener?.close();
    await this.db.deregister(this.options.nodeId, this.instance).catch((err: unknown) => {
      this.options.log.warn({ err }, 'could not remove this node from the cluster table');
    });
    this.replies.rejectAll('this node is shutting down');
  }

  private async register(): Promise<void> {
    const node = {
      id: this.options.nodeId,
      instance: this.instance,
      capacity: this.options.capacity,
      mediaReady: this.mediaReady,
    };
    const until = Date.now() + this.timing.lostAfterMs * 2;
    let said = false;
    while (!(await this.db.register(node, this.timing.lostAfterMs))) {
      if (Date.now() > until) {
        throw new Error(
          `another live node uses the node id "${this.options.nodeId}"; give each node its own VISAGE_NODE_ID`,
        );
      }
      if (!said) {
        this.options.log.warn(
          { node_id: this.options.nodeId },
          'a previous instance of this node still has a recent heartbeat; waiting for it to fall silent',
        );
        said = true;
      }
      await sleep(this.timing.heartbeatMs / 2);
    }
  }

  /** Marks this node's row as having its media up (retried on the next heartbeat if it fails). */
  private async saveMediaReady(): Promise<void> {
    if (this.mediaReadySaved || !this.mediaReady || this.left) return;
    try {
      await this.db.setMediaReady(this.options.nodeId, this.instance);
      this.mediaReadySaved = true;
    } catch {
      // The database is away: the heartbeat tries again.
    }
  }

  private notified(channel: string, payload: string): void {
    if (channel === KEYS_CHANNEL) {
      this.options.store.keyChangedElsewhere(payload);
      return;
    }
    if (channel === RECONCILE_CHANNEL) {
      void this.applier?.reconcile().catch((err: unknown) => {
        this.options.log.error({ err }, 'reconciliation failed');
      });
      return;
    }
    const n = parseNodeNotification(payload);
    if ('commands' in n) this.inbox.claim();
    else if ('command' in n) this.inbox.arrived({ ...n.command, seq: 0 });
    else if ('replyTo' in n) {
      if ('reply' in n) this.replies.resolve(n.replyTo, n.reply);
      else this.replies.readRow(n.replyTo);
    } else this.options.log.warn({ payload: n.unknown }, 'unknown cluster notification');
  }

  /** Every heartbeat: prove this node alive, then sweep for lost nodes. */
  private async tick(): Promise<void> {
    if (this.left) return;
    this.inbox.forgetOld();
    let alive: boolean;
    try {
      alive = await this.db.heartbeat(this.options.nodeId, this.instance);
    } catch (err) {
      if (this.healthySince !== undefined) {
        this.options.log.warn({ err }, 'heartbeat failed: the database is unavailable; retrying');
      }
      this.healthySince = undefined;
      return;
    }
    if (this.healthySince === undefined) {
      this.options.log.info('heartbeat: the database is back');
      this.healthySince = Date.now();
      // The others could not heartbeat either, and may be slower to get back: one of them may
      // have a connection attempt from the outage to wait out first (POSTGRES_CONNECT_TIMEOUT_MS)
      // before its next heartbeat. Silence before that is not theirs to answer for.
      this.sweepNotBefore =
        this.healthySince +
        this.timing.lostAfterMs +
        POSTGRES_CONNECT_TIMEOUT_MS +
        this.timing.heartbeatMs;
      this.inbox.claim();
      // Ends that could not be recorded meanwhile are recorded now (their slots free).
      void this.applier?.reconcile().catch((err: unknown) => {
        this.options.log.warn({ err }, 'reconciliation failed');
      });
    }
    if (!alive) {
      this.options.log.error(
        { node_id: this.options.nodeId },
        'this node was declared lost by the cluster (its sessions were ended); joining again',
      );
      this.healthySince = Date.now();
      this.sweepNotBefore = this.healthySince + this.timing.lostAfterMs;
      await this.register().catch((err: unknown) => {
        this.options.log.error({ err }, 'could not join the cluster again');
      });
      await this.applier?.reconcile().catch(() => undefined);
      return;
    }
    // A node that could not see the database for a while must not judge others: they could
    // not heartbeat either. It sweeps only after `lostAfterMs` of its own good heartbeats, and
    // after an outage also only once the others have had time to get back (`sweepNotBefore`).
    await this.saveMediaReady();
    if (Date.now() < this.sweepNotBefore) return;
    await this.sweep().catch((err: unknown) => this.options.log.warn({ err }, 'sweep failed'));
    // A NOTIFY lost while the connection was changing hands: look for waiting commands anyway.
    this.inbox.claim();
  }

  private async sweep(): Promise<void> {
    const loss = await this.db.sweep(this.options.nodeId, this.timing.lostAfterMs, NODE_LOST_REPLY);
    if (!loss) return;
    for (const node of loss.nodes) {
      const sessions = loss.sessions.filter((s) => s.nodeId === node.id).map((s) => s.id);
      this.options.log.warn(
        { lost_node: node.id, last_heartbeat: node.lastHeartbeat.toISOString(), sessions },
        `node lost: no heartbeat for ${this.timing.lostAfterMs / 1000} s; its sessions ended (error)`,
      );
    }
    for (const s of loss.sessions) {
      this.options.log.warn(
        { session_id: s.id, lost_node: s.nodeId, end_reason: 'error' },
        'session ended: its node was lost',
      );
    }
  }
}
