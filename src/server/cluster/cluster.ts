import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import {
  nodeChannel,
  parseNodeNotification,
  KEYS_CHANNEL,
  RECONCILE_CHANNEL,
  type ClaimedCommand,
  type ClusterStore,
  type NewCommand,
} from '../store/clusterStore.js';
import type { NotificationListener } from '../store/notificationListener.js';
import { POSTGRES_CONNECT_TIMEOUT_MS } from '../store/postgresDatabase.js';
import { errorReply } from '../sessions/routing/sessionCommand.js';
import type { Placement, Store } from '../store/store.js';

/**
 * Several `visage serve` nodes on one PostgreSQL server behave as one service. This node:
 *
 * - keeps a row in `cluster_nodes` with its capacity, its running count and a heartbeat;
 * - places new sessions on the least-loaded live node with room (`placement()`, used inside the
 *   create transaction), and hands a session placed elsewhere to its node with a `start`
 *   command;
 * - hands driving calls on sessions that other nodes run to them (`post`): a row in
 *   `session_commands` plus a NOTIFY; the other node applies its commands in the order they
 *   were inserted and answers each (NOTIFY back), so interrupt's counts come back too;
 * - applies the commands addressed to it (through the `CommandApplier`, the session manager);
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
}

/** The session manager, seen from the cluster: it applies what other nodes hand over. */
export interface CommandApplier {
  /** Applies one command addressed to this node; resolves with the reply (JSON). */
  apply(command: ClaimedCommand): Promise<unknown>;
  /** Sessions this node runs may have been ended in the database by someone else: look now. */
  reconcile(): Promise<void>;
}

/** What the sweep answers on behalf of a lost node to the commands it never answered. */
export const NODE_LOST_REPLY = {
  error: { code: 'node_lost', message: 'the node that runs the session was lost' },
} as const;

interface PendingReply {
  resolve(reply: unknown): void;
  reject(err: Error): void;
  poll?: NodeJS.Timeout;
  timer?: NodeJS.Timeout;
}

/** A reply this node listens for (see Cluster.expectReply). */
export interface ExpectedReply {
  /** The reply, or ReplyTimeoutError after `timeoutMs`. */
  wait(kind: string, nodeId: string, timeoutMs: number): Promise<unknown>;
  forget(): void;
}

/** How long a node remembers the commands it applied (longer than any reply takes). */
const APPLIED_MEMORY_MS = 5 * 60_000;

/** How often a node waiting for a reply also reads it from its row (a NOTIFY may be lost). */
const REPLY_POLL_MS = 1_000;

/** The node that runs a session did not answer in time. */
export class ReplyTimeoutError extends Error {
  constructor(kind: string, nodeId: string) {
    super(`node ${nodeId} did not answer the ${kind} in time`);
    this.name = 'ReplyTimeoutError';
  }
}

export class Cluster {
  private readonly timing: ClusterTiming;
  private readonly db: ClusterStore;
  private readonly instance = randomBytes(9).toString('base64url');
  private readonly replies = new Map<string, PendingReply>();
  private listener: NotificationListener | undefined;
  private applier: CommandApplier | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  /** Since when every heartbeat succeeded (undefined while the database is unreachable). */
  private healthySince: number | undefined;
  /** This node judges others only from then on (see `tick`). */
  private sweepNotBefore = 0;
  private claiming = false;
  private claimAgain = false;
  private left = false;
  /** Commands applied lately (id -> when), so that none is applied twice. */
  private readonly applied = new Map<string, number>();

  private constructor(private readonly options: ClusterOptions) {
    if (!options.store.cluster)
      throw new Error('a cluster needs a PostgreSQL server (DATABASE_URL)');
    this.db = options.store.cluster;
    this.timing = { ...DEFAULT_CLUSTER_TIMING, ...options.timing };
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
          connected: () => cluster.claimCommands(),
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
    return cluster;
  }

  /** Starts applying the commands addressed to this node (those waiting included). */
  serve(applier: CommandApplier): void {
    this.applier = applier;
    this.claimCommands();
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
   * the reply may come back before the INSERT's own answer does. `wait` then bounds the wait
   * and also reads the reply from its row now and then (a NOTIFY may be lost); `forget` stops.
   */
  expectReply(id: string): ExpectedReply {
    let resolve!: (reply: unknown) => void;
    let reject!: (err: Error) => void;
    const settled = new Promise<unknown>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    settled.catch(() => undefined); // observed through wait()
    // The row stays a minute after its reply (the sweep deletes it).
    const pending: PendingReply = { resolve, reject };
    this.replies.set(id, pending);
    return {
      wait: (kind, nodeId, timeoutMs) => {
        if (this.replies.get(id) === pending) {
          pending.poll = setInterval(() => {
            this.db.replyOf(id).then(
              (found) => found && this.settle(id, (p) => p.resolve(found.reply)),
              () => undefined, // the database is away; the NOTIFY or the next poll will do
            );
          }, REPLY_POLL_MS);
          pending.poll.unref();
          pending.timer = setTimeout(
            () => this.settle(id, (p) => p.reject(new ReplyTimeoutError(kind, nodeId))),
            timeoutMs,
          );
        }
        return settled;
      },
      forget: () => this.settle(id, () => undefined),
    };
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
    await this.claimCommandsNow().catch(() => undefined);
    this.left = true;
    await this.listener?.close();
    await this.db.deregister(this.options.nodeId, this.instance).catch((err: unknown) => {
      this.options.log.warn({ err }, 'could not remove this node from the cluster table');
    });
    for (const id of [...this.replies.keys()]) {
      this.settle(id, (p) => p.reject(new Error('this node is shutting down')));
    }
  }

  private async register(): Promise<void> {
    const node = {
      id: this.options.nodeId,
      instance: this.instance,
      capacity: this.options.capacity,
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
      await new Promise((r) => setTimeout(r, this.timing.heartbeatMs / 2));
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
    if ('commands' in n) this.claimCommands();
    else if ('command' in n) {
      // Notifications arrive in commit order: applied as they come, in order. While a claim
      // is under way (a command with bytes came first), this one waits its turn in the claim.
      if (this.applier && !this.left && !this.claiming) {
        this.applyAndReply({ ...n.command, seq: 0 });
      } else this.claimCommands();
    } else if ('replyTo' in n) {
      const id = n.replyTo;
      if ('reply' in n) this.settle(id, (p) => p.resolve(n.reply));
      else {
        void this.db.replyOf(id).then(
          (found) => found && this.settle(id, (p) => p.resolve(found.reply)),
          () => undefined, // polled again shortly
        );
      }
    } else this.options.log.warn({ payload: n.unknown }, 'unknown cluster notification');
  }

  private settle(id: string, how: (p: PendingReply) => void): void {
    const pending = this.replies.get(id);
    if (!pending) return;
    this.replies.delete(id);
    clearInterval(pending.poll);
    clearTimeout(pending.timer);
    how(pending);
  }

  /** Claims and applies this node's pending commands; one claim at a time, in order. */
  private claimCommands(): void {
    this.claimCommandsNow().catch((err: unknown) => {
      this.options.log.warn({ err }, 'could not claim commands (retried at the next heartbeat)');
    });
  }

  private async claimCommandsNow(): Promise<void> {
    if (!this.applier || this.left) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = true;
    try {
      do {
        this.claimAgain = false;
        const commands = await this.db.claimCommands(this.options.nodeId);
        // Applied in order: each is queued on its session before the next is looked at.
        for (const c of commands) if (!this.applied.has(c.id)) this.applyAndReply(c);
      } while (this.claimAgain);
    } finally {
      this.claiming = false;
    }
  }

  private applyAndReply(c: ClaimedCommand): void {
    // A command that came in its NOTIFY may also be claimed from its row: applied once.
    if (this.applied.has(c.id)) return;
    this.applied.set(c.id, Date.now());
    const applier = this.applier!;
    let outcome: Promise<unknown>;
    try {
      outcome = applier.apply(c);
    } catch (err) {
      outcome = Promise.reject(err);
    }
    void outcome
      .then(
        (ok) => ({ ok: ok ?? null }),
        (err: unknown) => {
          const reply = errorReply(err);
          if (reply.error.code === 'internal') {
            this.options.log.error(
              { err, command: c.kind, session_id: c.sessionId },
              'a command failed',
            );
          }
          return reply;
        },
      )
      .then((reply) => this.db.reply(c.id, c.replyNode, reply))
      .catch((err: unknown) => {
        this.options.log.warn({ err, command: c.kind, session_id: c.sessionId }, 'could not reply');
      });
  }

  /** Every heartbeat: prove this node alive, then sweep for lost nodes. */
  private async tick(): Promise<void> {
    if (this.left) return;
    // Answered long ago: their rows are done (never claimed again) or deleted.
    for (const [id, at] of this.applied) {
      if (Date.now() - at < APPLIED_MEMORY_MS) break;
      this.applied.delete(id);
    }
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
      this.claimCommands();
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
    if (Date.now() < this.sweepNotBefore) return;
    await this.sweep().catch((err: unknown) => this.options.log.warn({ err }, 'sweep failed'));
    // A NOTIFY lost while the connection was changing hands: look for waiting commands anyway.
    this.claimCommands();
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

/** A fresh command id (the sender picks it, to wait for the reply before inserting). */
export function newCommandId(): string {
  return `cmd_${randomBytes(12).toString('base64url')}`;
}
