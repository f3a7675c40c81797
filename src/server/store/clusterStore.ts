// SPDX-License-Identifier: GPL-3.0-or-later
import { createHash } from 'node:crypto';
import type { Database, Executor, Queryable } from './database.js';

/**
 * The SQL of several nodes on one PostgreSQL: which nodes are alive and how loaded they are
 * (`cluster_nodes`, a heartbeat every few seconds), where a new session goes (the least-loaded
 * live node with room, claimed with `FOR UPDATE SKIP LOCKED` as job queues do), and the
 * driving calls one node hands to the node that runs the session (`session_commands`, delivered
 * with NOTIFY, answered with NOTIFY). See cluster/cluster.ts for the protocol around it.
 */

/** A driving call (or a start, or an end) for the node that runs the session. */
export interface NewCommand {
  /** Chosen by the sender, so that it can wait for the reply before the row exists. */
  id: string;
  sessionId: string;
  /** The node that runs the session and applies the command. */
  nodeId: string;
  /** The node waiting for the reply. */
  replyNode: string;
  kind: string;
  /** JSON. */
  body: unknown;
  /** Audio payloads ride as bytes beside the JSON. */
  bytes: Uint8Array | null;
}

export interface ClaimedCommand extends NewCommand {
  seq: number;
}

export interface NodeLoss {
  /** Nodes whose heartbeat stopped, with the last one. */
  nodes: { id: string; lastHeartbeat: Date }[];
  /** Live sessions of lost nodes (or of nodes gone without a row), now ended `error`. */
  sessions: { id: string; nodeId: string }[];
  /** Commands those nodes will never answer, now answered with `reply`. */
  commands: { id: string; replyNode: string; kind: string }[];
}

/** What a node listens on: its commands and the replies it waits for. */
export function nodeChannel(nodeId: string): string {
  // Channel names are identifiers (at most 63 bytes); node ids are free-form host names.
  return `visage_node_${createHash('sha256').update(nodeId).digest('hex').slice(0, 24)}`;
}

/** Every node listens here too: sessions were ended elsewhere (a key revoked), look now. */
export const RECONCILE_CHANNEL = 'visage_reconcile';

/**
 * Every node listens here too: a key's cap changed or it was revoked by another process (another
 * node, `visage keys` on DATABASE_URL); the payload is the key's id.
 */
export const KEYS_CHANNEL = 'visage_keys';

/**
 * A node's notifications: commands to claim, a command itself (small ones ride in the NOTIFY,
 * saving the claim's round trip), or the reply to a command it sent.
 */
export type NodeNotification =
  | { commands: true }
  | { command: NewCommand }
  | { replyTo: string; reply?: unknown }
  | { unknown: string };

/** NOTIFY payloads are limited to 8000 bytes; longer ones are read from their row. */
const INLINE_PAYLOAD_BYTES = 7_000;

export function parseNodeNotification(payload: string): NodeNotification {
  if (payload === 'c') return { commands: true };
  try {
    const parsed = JSON.parse(payload) as { r?: unknown; reply?: unknown; x?: NewCommand };
    if (typeof parsed.r === 'string') {
      return 'reply' in parsed ? { replyTo: parsed.r, reply: parsed.reply } : { replyTo: parsed.r };
    }
    if (parsed.x && typeof parsed.x.id === 'string') {
      return { command: { ...parsed.x, bytes: null } };
    }
  } catch {
    // fall through
  }
  return { unknown: payload };
}

function replyPayload(id: string, reply: unknown): string {
  const inline = JSON.stringify({ r: id, reply });
  return Buffer.byteLength(inline) <= INLINE_PAYLOAD_BYTES ? inline : JSON.stringify({ r: id });
}

/** The command itself when it is small and has no bytes, else 'c' (claim your commands). */
function commandPayload(c: NewCommand): string {
  if (c.bytes) return 'c';
  const inline = JSON.stringify({ x: { ...c, bytes: undefined } });
  return Buffer.byteLength(inline) <= INLINE_PAYLOAD_BYTES ? inline : 'c';
}

/** Transaction-scoped advisory lock: one node sweeps at a time. */
const SWEEP_LOCK_ID = 7_263_002;

const LIVE = `('active', 'waiting')`;

/** A row of `session_commands`, as claimCommands reads it. */
interface CommandRow {
  /** bigserial: a string from node-postgres, a number from PGlite. */
  seq: string | number;
  id: string;
  session_id: string;
  node_id: string;
  reply_node: string;
  kind: string;
  /** jsonb, parsed by the driver. */
  body: unknown;
  bytes: Uint8Array | null;
}

function commandFromRow(r: CommandRow): ClaimedCommand {
  return {
    seq: Number(r.seq),
    id: r.id,
    sessionId: r.session_id,
    nodeId: r.node_id,
    replyNode: r.reply_node,
    kind: r.kind,
    body: r.body,
    bytes: r.bytes ? new Uint8Array(r.bytes) : null,
  };
}

const bytea = (bytes: Uint8Array | null) =>
  bytes ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : null;

/**
 * Within the create transaction: the least-loaded live node with room (this one first among
 * equals), its `running` count taken. First without waiting (`SKIP LOCKED`: parallel creates
 * spread over the nodes), then, if every candidate was locked by another create, waiting for
 * each in turn, so that `platform_busy` means every node is full, not that they were busy.
 * Returns the node id, or undefined when no live node has room.
 */
export async function placeOnClusterNode(
  tx: Queryable,
  self: string,
  liveWithinMs: number,
): Promise<string | undefined> {
  const live = `heartbeat_at > now() - make_interval(secs => $1::float8 / 1000)
    AND NOT draining AND running < capacity`;
  // Nodes whose media is up first: a session on a node still starting its media processes waits
  // for them (seconds, or tens of seconds on a first start), so such a node gets one only when
  // no other has room.
  const order = `media_ready DESC, running::float8 / capacity, (id = $2) DESC, id`;
  // The quick pass skips locked rows, and a row is locked by more than another create: a node's
  // heartbeat holds its own for a moment. So while any node with its media up has room, the
  // quick pass looks at those only: a heartbeat must not send a create to a node still starting
  // its media (seen in a loaded CI run: the create then waited 60 s for it). When they are all
  // locked, the waiting pass below takes them in order.
  const quick = await tx.query<{ id: string }>(
    `UPDATE cluster_nodes SET running = running + 1
     WHERE id = (SELECT id FROM cluster_nodes
                 WHERE ${live} AND (media_ready OR NOT EXISTS (
                   SELECT 1 FROM cluster_nodes WHERE ${live} AND media_ready))
                 ORDER BY ${order} LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING id`,
    [liveWithinMs, self],
  );
  if (quick.rows[0]) return quick.rows[0].id;
  const candidates = await tx.query<{ id: string }>(
    `SELECT id FROM cluster_nodes WHERE ${live} ORDER BY ${order}`,
    [liveWithinMs, self],
  );
  for (const { id } of candidates.rows) {
    // Waits for a create holding the row, then re-checks it as committed.
    const taken = await tx.query<{ id: string }>(
      `UPDATE cluster_nodes SET running = running + 1 WHERE id = $2 AND ${live} RETURNING id`,
      [liveWithinMs, id],
    );
    if (taken.rows[0]) return id;
  }
  return undefined;
}

/** Inserts a command and wakes its node (NOTIFY is delivered when the transaction commits). */
export async function insertCommand(db: Queryable, c: NewCommand): Promise<void> {
  await db.query(
    `WITH inserted AS (
       INSERT INTO session_commands (id, session_id, node_id, reply_node, kind, body, bytes,
         created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now()) RETURNING id)
     SELECT pg_notify($8, $9) FROM inserted`,
    [
      c.id,
      c.sessionId,
      c.nodeId,
      c.replyNode,
      c.kind,
      JSON.stringify(c.body),
      bytea(c.bytes),
      nodeChannel(c.nodeId),
      commandPayload(c),
    ],
  );
}

/** Frees a node's slot for sessions that ended (their rows already say so). */
export async function releaseSlots(db: Queryable, nodeIds: string[]): Promise<void> {
  if (nodeIds.length === 0) return;
  await db.query(
    `UPDATE cluster_nodes c SET running = greatest(c.running - n.count, 0)
     FROM (SELECT id, count(*)::int AS count FROM unnest($1::text[]) AS id GROUP BY id) n
     WHERE c.id = n.id`,
    [nodeIds],
  );
}

export class ClusterStore {
  constructor(private readonly db: Database) {}

  /**
   * Registers this node. A row of the same id held by another instance that is still alive
   * (heartbeat within `liveWithinMs`) is not taken: false (a node restarted right after a crash
   * waits for its predecessor to fall silent; two live nodes never share an id).
   */
  async register(
    node: { id: string; instance: string; capacity: number; mediaReady: boolean },
    liveWithinMs: number,
  ): Promise<boolean> {
    const r = await this.db.query(
      `INSERT INTO cluster_nodes (id, instance, capacity, running, draining, media_ready,
         started_at, heartbeat_at)
       VALUES ($1, $2, $3, 0, false, $5, now(), now())
       ON CONFLICT (id) DO UPDATE SET instance = EXCLUDED.instance, capacity = EXCLUDED.capacity,
         running = 0, draining = false, media_ready = EXCLUDED.media_ready, started_at = now(),
         heartbeat_at = now()
       WHERE cluster_nodes.instance = EXCLUDED.instance
          OR cluster_nodes.heartbeat_at <= now() - make_interval(secs => $4::float8 / 1000)
       RETURNING id`,
      [node.id, node.instance, node.capacity, liveWithinMs, node.mediaReady],
    );
    return r.rows.length > 0;
  }

  /**
   * The node is alive: its heartbeat, and its `running` count recomputed from its live
   * sessions (the row is locked first, so the count sees every committed create). False when
   * the row is gone or another instance holds it: this node was declared lost.
   */
  async heartbeat(nodeId: string, instance: string): Promise<boolean> {
    // On the liveness connection: never queued behind a burst of requests.
    const run = <T>(fn: (tx: Executor) => Promise<T>) =>
      this.db.liveness ? this.db.liveness(fn) : this.db.transaction(fn);
    return run(async (tx) => {
      const mine = await tx.query(
        'SELECT 1 FROM cluster_nodes WHERE id = $1 AND instance = $2 FOR UPDATE',
        [nodeId, instance],
      );
      if (mine.rows.length === 0) return false;
      await tx.query(
        `UPDATE cluster_nodes SET heartbeat_at = now(),
           running = (SELECT count(*)::int FROM sessions WHERE node_id = $1 AND status IN ${LIVE})
         WHERE id = $1`,
        [nodeId],
      );
      return true;
    });
  }

  /** The node's media processes are up: it is placed on like any other from now on. */
  async setMediaReady(nodeId: string, instance: string): Promise<void> {
    await this.db.query(
      'UPDATE cluster_nodes SET media_ready = true WHERE id = $1 AND instance = $2',
      [nodeId, instance],
    );
  }

  /** No new sessions are placed on a draining node. */
  async setDraining(nodeId: string, instance: string): Promise<void> {
    await this.db.query(
      'UPDATE cluster_nodes SET draining = true WHERE id = $1 AND instance = $2',
      [nodeId, instance],
    );
  }

  async deregister(nodeId: string, instance: string): Promise<void> {
    await this.db.query('DELETE FROM cluster_nodes WHERE id = $1 AND instance = $2', [
      nodeId,
      instance,
    ]);
  }

  /**
   * One node at a time (advisory lock; the others skip): nodes silent for longer than
   * `lostAfterMs` are removed, their live sessions (and live sessions of nodes that have no
   * row, left by a crash) end `error`, and their unanswered commands get `reply`, each sender
   * woken. Old command rows are deleted. Returns what was done, or undefined when another
   * node holds the sweep.
   */
  async sweep(self: string, lostAfterMs: number, reply: unknown): Promise<NodeLoss | undefined> {
    return this.db.transaction(async (tx) => {
      const lock = await tx.query<{ got: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS got', [
        SWEEP_LOCK_ID,
      ]);
      if (!lock.rows[0]?.got) return undefined;
      const stale = `make_interval(secs => $1::float8 / 1000)`;
      const nodes = await tx.query<{ id: string; heartbeat_at: Date }>(
        `DELETE FROM cluster_nodes WHERE heartbeat_at < now() - ${stale} AND id <> $2
         RETURNING id, heartbeat_at`,
        [lostAfterMs, self],
      );
      const lost = nodes.rows.map((r) => r.id);
      const sessions = await tx.query<{ id: string; node_id: string }>(
        `UPDATE sessions SET status = 'ended', end_reason = 'error', ended_at = now(),
           updated_at = now()
         WHERE status IN ${LIVE} AND (node_id = ANY($2::text[]) OR (
           updated_at < now() - ${stale}
           AND NOT EXISTS (SELECT 1 FROM cluster_nodes c WHERE c.id = sessions.node_id)))
         RETURNING id, node_id`,
        [lostAfterMs, lost],
      );
      const commands = await tx.query<{ id: string; reply_node: string; kind: string }>(
        `UPDATE session_commands SET state = 'done', reply = $2
         WHERE state <> 'done' AND (node_id = ANY($1::text[])
           OR NOT EXISTS (SELECT 1 FROM cluster_nodes c WHERE c.id = session_commands.node_id))
         RETURNING id, reply_node, kind`,
        [lost, JSON.stringify(reply)],
      );
      for (const c of commands.rows) {
        await tx.query('SELECT pg_notify($1, $2)', [
          nodeChannel(c.reply_node),
          replyPayload(c.id, reply),
        ]);
      }
      // Answered commands are kept a minute (a sender may read its reply from the row).
      await tx.query(
        `DELETE FROM session_commands WHERE (state = 'done' AND created_at < now() - interval '1 minute')
           OR created_at < now() - interval '10 minutes'`,
      );
      return {
        nodes: nodes.rows.map((r) => ({ id: r.id, lastHeartbeat: new Date(r.heartbeat_at) })),
        sessions: sessions.rows.map((r) => ({ id: r.id, nodeId: r.node_id })),
        commands: commands.rows.map((r) => ({ id: r.id, replyNode: r.reply_node, kind: r.kind })),
      };
    });
  }

  insertCommand(c: NewCommand): Promise<void> {
    return insertCommand(this.db, c);
  }

  /** This node's pending commands, marked claimed, in the order they were inserted. */
  async claimCommands(nodeId: string): Promise<ClaimedCommand[]> {
    const r = await this.db.query<CommandRow>(
      `UPDATE session_commands SET state = 'claimed'
       WHERE node_id = $1 AND state = 'pending'
       RETURNING seq, id, session_id, node_id, reply_node, kind, body, bytes`,
      [nodeId],
    );
    return r.rows.map(commandFromRow).sort((a, b) => a.seq - b.seq);
  }

  /** Records a command's reply and wakes the node waiting for it. */
  async reply(id: string, replyNode: string, reply: unknown): Promise<void> {
    await this.db.query(
      `WITH answered AS (
         UPDATE session_commands SET state = 'done', reply = $2, bytes = NULL
         WHERE id = $1 RETURNING id)
       SELECT pg_notify($3, $4) FROM answered`,
      [id, JSON.stringify(reply), nodeChannel(replyNode), replyPayload(id, reply)],
    );
  }

  /** The reply to a command, once there is one. */
  async replyOf(id: string): Promise<{ reply: unknown } | undefined> {
    const r = await this.db.query<{ reply: unknown }>(
      `SELECT reply FROM session_commands WHERE id = $1 AND state = 'done'`,
      [id],
    );
    return r.rows[0] ? { reply: r.rows[0].reply } : undefined;
  }

  /** Wakes every node: sessions were ended in the database by someone else; look now. */
  async broadcastReconcile(): Promise<void> {
    await this.db.query(`SELECT pg_notify($1, '')`, [RECONCILE_CHANNEL]);
  }
}
