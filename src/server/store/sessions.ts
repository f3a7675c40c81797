// SPDX-License-Identifier: GPL-3.0-or-later
import type { EndReason, SessionMode, SessionStatus } from '@visage-avatar/client/api';
import type { Database, Queryable } from './database.js';
import { insertCommand, placeOnClusterNode, type NewCommand } from './clusterStore.js';
import { page, type Page, type Seq } from './paging.js';

/**
 * Sessions (`sessions`) and the rooms they claim (`room_claims`): the atomic create that keeps
 * the caps, the status changes, and what a node asks about its own sessions.
 */

export interface SessionRecord {
  id: string;
  keyId: string;
  nodeId: string;
  status: SessionStatus;
  avatarId: string;
  voiceId: string;
  mode: SessionMode;
  transport: 'livekit';
  livekitUrl: string;
  roomName: string;
  agentIdentity: string;
  publishOnBehalf: string | null;
  /** The caller brought the LiveKit (and the avatar's token): no participant tokens for it. */
  callerLiveKit: boolean;
  idleTimeoutSeconds: number;
  maxDurationSeconds: number;
  createdAt: Date;
  updatedAt: Date;
  endedAt: Date | null;
  endReason: EndReason | null;
}

/** What a create supplies; the store sets the rest (the node from the placement). */
export type NewSession = Omit<
  SessionRecord,
  'createdAt' | 'updatedAt' | 'endedAt' | 'endReason' | 'status' | 'nodeId'
>;

/** Why an atomic session insert was refused. */
export type CapacityRefusal =
  | { refused: 'concurrency_cap'; active: number; cap: number }
  | { refused: 'platform_busy'; active: number; cap: number }
  | { refused: 'room_not_available'; active: number; cap: number };

/**
 * Where a new session runs. `node`: this node, within its own capacity (the embedded store, one
 * process). `cluster`: the least-loaded live node of the shared database with room (this one
 * first among equals); when it is another node, `handoff` is the command that tells that node
 * to start it, inserted in the same transaction.
 */
export type Placement =
  | { kind: 'node'; nodeId: string; capacity: number }
  | {
      kind: 'cluster';
      self: string;
      liveWithinMs: number;
      handoff: (session: SessionRecord) => NewCommand;
    };

/** A row of `sessions`. Status and end reason are only ever written by this code. */
interface SessionRow {
  id: string;
  seq: Seq;
  key_id: string;
  node_id: string;
  status: SessionStatus;
  avatar_id: string;
  voice_id: string;
  mode: string;
  transport: string;
  livekit_url: string;
  room_name: string;
  agent_identity: string;
  publish_on_behalf: string | null;
  caller_livekit: boolean;
  idle_timeout_seconds: number;
  max_duration_seconds: number;
  created_at: Date;
  updated_at: Date;
  ended_at: Date | null;
  end_reason: EndReason | null;
}

function sessionFromRow(r: SessionRow): SessionRecord {
  return {
    id: r.id,
    keyId: r.key_id,
    nodeId: r.node_id,
    status: r.status,
    avatarId: r.avatar_id,
    voiceId: r.voice_id,
    mode: r.mode === 'client' ? 'client' : 'video',
    transport: 'livekit',
    livekitUrl: r.livekit_url,
    roomName: r.room_name,
    agentIdentity: r.agent_identity,
    publishOnBehalf: r.publish_on_behalf ?? null,
    callerLiveKit: r.caller_livekit === true,
    idleTimeoutSeconds: r.idle_timeout_seconds,
    maxDurationSeconds: r.max_duration_seconds,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    endedAt: r.ended_at == null ? null : new Date(r.ended_at),
    endReason: r.end_reason ?? null,
  };
}

const LIVE = `('active', 'waiting')`;

/** A key's cap and its live sessions, read without locking (see Store.insertSessionWithinCaps). */
export async function capAndLiveForKey(
  db: Queryable,
  keyId: string,
): Promise<{ cap: number; active: number }> {
  const r = await db.query<{ cap: number; active: number }>(
    `SELECT concurrency_cap AS cap,
       (SELECT count(*)::int FROM sessions WHERE key_id = $1 AND status IN ${LIVE}) AS active
     FROM api_keys WHERE id = $1`,
    [keyId],
  );
  return r.rows[0]!;
}

/**
 * Inserts a session if the key is under its cap, a node has room and the room is not another
 * key's, atomically: the key's row and the room's claim are locked for the check-and-insert,
 * so parallel creates cannot overshoot or share a room across keys (on PostgreSQL at READ
 * COMMITTED, each count after the lock sees every earlier commit). With `node` placement the
 * node's count is serialized by a transaction-scoped advisory lock on the node id; with
 * `cluster` placement by the chosen node's row (see placeOnClusterNode).
 */
export function insertSessionLocked(
  db: Database,
  s: NewSession,
  placement: Placement,
): Promise<{ session: SessionRecord; active: number; cap: number } | CapacityRefusal> {
  return db.transaction(async (tx) => {
    const key = await tx.query<{ concurrency_cap: number }>(
      'SELECT concurrency_cap FROM api_keys WHERE id = $1 FOR UPDATE',
      [s.keyId],
    );
    const cap = key.rows[0]!.concurrency_cap;
    const active = await countLive(tx, 'key_id', s.keyId);
    if (active >= cap) return { refused: 'concurrency_cap', active, cap };
    if (!(await claimRoom(tx, s.livekitUrl, s.roomName, s.keyId))) {
      return { refused: 'room_not_available', active, cap };
    }
    let nodeId: string | undefined;
    if (placement.kind === 'node') {
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [placement.nodeId]);
      const onNode = await countLive(tx, 'node_id', placement.nodeId);
      if (onNode < placement.capacity) nodeId = placement.nodeId;
    } else {
      nodeId = await placeOnClusterNode(tx, placement.self, placement.liveWithinMs);
    }
    if (!nodeId) return { refused: 'platform_busy', active, cap };
    const r = await tx.query<SessionRow>(
      `INSERT INTO sessions (id, key_id, node_id, status, avatar_id, voice_id, mode, transport,
         livekit_url, room_name, agent_identity, publish_on_behalf, caller_livekit,
         idle_timeout_seconds, max_duration_seconds, created_at, updated_at)
       VALUES ($1, $2, $3, 'active', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, now(),
         now())
       RETURNING *`,
      [
        s.id,
        s.keyId,
        nodeId,
        s.avatarId,
        s.voiceId,
        s.mode,
        s.transport,
        s.livekitUrl,
        s.roomName,
        s.agentIdentity,
        s.publishOnBehalf,
        s.callerLiveKit,
        s.idleTimeoutSeconds,
        s.maxDurationSeconds,
      ],
    );
    const session = sessionFromRow(r.rows[0]!);
    if (placement.kind === 'cluster' && nodeId !== placement.self) {
      await insertCommand(tx, placement.handoff(session));
    }
    return { session, active: active + 1, cap };
  });
}

/** A session by id; of this key only when `keyId` is given. */
export async function getSession(
  db: Queryable,
  id: string,
  keyId?: string,
): Promise<SessionRecord | undefined> {
  const r =
    keyId === undefined
      ? await db.query<SessionRow>('SELECT * FROM sessions WHERE id = $1', [id])
      : await db.query<SessionRow>('SELECT * FROM sessions WHERE id = $1 AND key_id = $2', [
          id,
          keyId,
        ]);
  return r.rows[0] ? sessionFromRow(r.rows[0]) : undefined;
}

export function listSessions(
  db: Queryable,
  keyId: string,
  limit: number,
  after?: string,
  status?: SessionStatus,
): Promise<Page<SessionRecord> | 'unknown_cursor'> {
  const where = status ? 'key_id = $2 AND status = $3' : 'key_id = $2';
  const params = status ? [keyId, status] : [keyId];
  return page(db, 'sessions', where, params, limit, after, sessionFromRow);
}

export async function setSessionWaiting(
  db: Queryable,
  id: string,
  waiting: boolean,
): Promise<SessionRecord | undefined> {
  const r = await db.query<SessionRow>(
    `UPDATE sessions SET status = $2, updated_at = now()
     WHERE id = $1 AND status IN ${LIVE} RETURNING *`,
    [id, waiting ? 'waiting' : 'active'],
  );
  return r.rows[0] ? sessionFromRow(r.rows[0]) : undefined;
}

/** Ends a live session and frees its node's slot; undefined when it had already ended. */
export async function endSession(
  db: Queryable,
  id: string,
  reason: EndReason,
): Promise<SessionRecord | undefined> {
  const r = await db.query<SessionRow>(
    `WITH ended AS (
       UPDATE sessions SET status = 'ended', end_reason = $2, ended_at = now(),
         updated_at = now()
       WHERE id = $1 AND status IN ${LIVE} RETURNING *),
     released AS (
       UPDATE cluster_nodes c SET running = greatest(c.running - 1, 0)
       FROM ended WHERE c.id = ended.node_id)
     SELECT * FROM ended`,
    [id, reason],
  );
  return r.rows[0] ? sessionFromRow(r.rows[0]) : undefined;
}

/**
 * Ends a key's live sessions (their nodes' slots are the caller's to release). Returns each
 * ended session with its node.
 */
export async function endLiveSessionsOfKey(
  db: Queryable,
  keyId: string,
  reason: EndReason,
): Promise<{ id: string; nodeId: string }[]> {
  const r = await db.query<{ id: string; node_id: string }>(
    `UPDATE sessions SET status = 'ended', end_reason = $2, ended_at = now(), updated_at = now()
     WHERE key_id = $1 AND status IN ${LIVE} RETURNING id, node_id`,
    [keyId, reason],
  );
  return r.rows.map((row) => ({ id: row.id, nodeId: row.node_id }));
}

/** At start-up: sessions a crashed process left live on this node can never be driven again. */
export async function endLiveSessionsOnNode(
  db: Queryable,
  nodeId: string,
  reason: EndReason,
): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `UPDATE sessions SET status = 'ended', end_reason = $2, ended_at = now(), updated_at = now()
     WHERE node_id = $1 AND status IN ${LIVE} RETURNING id`,
    [nodeId, reason],
  );
  return r.rows.map((row) => row.id);
}

/** Ids of the sessions the database lists as live on this node (for reconciliation). */
export async function liveSessionIdsOnNode(db: Queryable, nodeId: string): Promise<Set<string>> {
  const r = await db.query<{ id: string }>(
    `SELECT id FROM sessions WHERE node_id = $1 AND status IN ${LIVE}`,
    [nodeId],
  );
  return new Set(r.rows.map((row) => row.id));
}

export async function countLive(
  db: Queryable,
  column: 'key_id' | 'node_id',
  value: string,
): Promise<number> {
  const r = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM sessions WHERE ${column} = $1 AND status IN ${LIVE}`,
    [value],
  );
  return r.rows[0]!.n;
}

/**
 * Claims a room for a key inside the caller's transaction: the claim row is locked, so creates
 * into the same room serialize here. The room is the key's unless another key has a live session
 * in it (whoever held the claim before, and rows older than the claims table, alike). Returns
 * false when it does.
 */
async function claimRoom(tx: Queryable, livekitUrl: string, room: string, keyId: string) {
  await tx.query(
    `INSERT INTO room_claims (livekit_url, room_name, key_id) VALUES ($1, $2, $3)
     ON CONFLICT (livekit_url, room_name) DO NOTHING`,
    [livekitUrl, room, keyId],
  );
  const claim = await tx.query<{ key_id: string }>(
    'SELECT key_id FROM room_claims WHERE livekit_url = $1 AND room_name = $2 FOR UPDATE',
    [livekitUrl, room],
  );
  const others = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM sessions
     WHERE livekit_url = $1 AND room_name = $2 AND key_id <> $3 AND status IN ${LIVE}`,
    [livekitUrl, room, keyId],
  );
  if (others.rows[0]!.n > 0) return false;
  if (claim.rows[0]!.key_id !== keyId) {
    await tx.query('UPDATE room_claims SET key_id = $3 WHERE livekit_url = $1 AND room_name = $2', [
      livekitUrl,
      room,
      keyId,
    ]);
  }
  return true;
}
