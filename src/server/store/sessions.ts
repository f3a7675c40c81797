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

/** Told when each step of a create ends (a debug timing: sessionCreation's `create timing`). */
export interface Stamps {
  mark(step: string): void;
}

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
 * key's, atomically, in as few statements as that allows (each is a round trip: to PGlite's
 * thread, or to the server):
 *
 * - On the embedded database, one statement (`checkAndInsert`): PGlite has one connection and
 *   runs a statement whole before the next, so its counts and its insert cannot interleave with
 *   another create's.
 * - On PostgreSQL, a transaction. Its first statement locks the key's row and the room's claim
 *   (and, with `node` placement, the node's advisory lock); the counts come in a later statement,
 *   since a statement's snapshot is taken when it starts, before it waits for a lock: at READ
 *   COMMITTED, only a statement that starts after the lock sees every create that held it before.
 *   With `node` placement that second statement is `checkAndInsert`, as on the embedded database;
 *   with `cluster` placement it checks the key and the room, the node is chosen by its own row
 *   (placeOnClusterNode), and the insert follows.
 */
export function insertSessionLocked(
  db: Database,
  s: NewSession,
  placement: Placement,
  stamps?: Stamps,
): Promise<{ session: SessionRecord; active: number; cap: number } | CapacityRefusal> {
  if (db.kind === 'embedded' && placement.kind === 'node') {
    return checkAndInsert(db, s, placement.nodeId, placement.capacity);
  }
  return db.transaction(async (tx) => {
    stamps?.mark('txTurn');
    await lockKeyAndRoom(tx, s, placement.kind === 'node' ? placement.nodeId : undefined);
    if (placement.kind === 'node') {
      const inserted = await checkAndInsert(tx, s, placement.nodeId, placement.capacity);
      stamps?.mark('txStatements');
      return inserted;
    }
    const checked = await checkKeyAndRoom(tx, s);
    if ('refused' in checked) return checked;
    const { active, cap } = checked;
    const nodeId = await placeOnClusterNode(tx, placement.self, placement.liveWithinMs);
    if (!nodeId) return { refused: 'platform_busy', active, cap };
    const r = await tx.query<SessionRow>(
      `INSERT INTO sessions (${INSERTED_COLUMNS}) VALUES (${insertedValues}) RETURNING *`,
      insertedParams(s, nodeId),
    );
    const session = sessionFromRow(r.rows[0]!);
    if (nodeId !== placement.self) await insertCommand(tx, placement.handoff(session));
    stamps?.mark('txStatements');
    return { session, active: active + 1, cap };
  });
}

/** The columns a create inserts, and their values ($1 to $14: see insertedParams). */
const INSERTED_COLUMNS = `id, key_id, node_id, status, avatar_id, voice_id, mode, transport,
  livekit_url, room_name, agent_identity, publish_on_behalf, caller_livekit,
  idle_timeout_seconds, max_duration_seconds, created_at, updated_at`;
// Typed, so that they read the same in a VALUES list and in an INSERT … SELECT.
const insertedValues = `$1::text, $2::text, $3::text, 'active', $4::text, $5::text, $6::text,
  $7::text, $8::text, $9::text, $10::text, $11::text, $12::boolean, $13::int, $14::int, now(),
  now()`;

function insertedParams(s: NewSession, nodeId: string): unknown[] {
  return [
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
  ];
}

/**
 * PostgreSQL, inside the create's transaction: locks the key's row, then the room's claim (made
 * if the room has none, else locked as it is), then, when given, the node's advisory lock, in
 * that order for every create. Parallel creates of a key, or into a room, or onto the node, wait
 * here for each other.
 */
async function lockKeyAndRoom(tx: Queryable, s: NewSession, nodeId: string | undefined) {
  await tx.query(
    `WITH key AS (SELECT id FROM api_keys WHERE id = $1 FOR UPDATE),
       claim AS (
         INSERT INTO room_claims (livekit_url, room_name, key_id) VALUES ($2, $3, $1)
         ON CONFLICT (livekit_url, room_name) DO UPDATE SET key_id = room_claims.key_id
         RETURNING key_id)
     SELECT (SELECT count(*) FROM key) AS keys, (SELECT count(*) FROM claim) AS claims
       ${nodeId === undefined ? '' : ', pg_advisory_xact_lock(hashtext($4))'}`,
    nodeId === undefined
      ? [s.keyId, s.livekitUrl, s.roomName]
      : [s.keyId, s.livekitUrl, s.roomName, nodeId],
  );
}

/**
 * The key's cap and live sessions, and whether another key has a live session in the room (the
 * room is then refused); the key's live count and the room's are read in one statement.
 */
function verdictOf(keyParam: string, urlParam: string, roomParam: string, onNode?: string) {
  return `SELECT k.concurrency_cap AS cap, live.n AS active,
      CASE WHEN live.n >= k.concurrency_cap THEN 'concurrency_cap'
           WHEN others.n > 0 THEN 'room_not_available'
           ${onNode ?? ''} END AS refused
    FROM api_keys k,
      (SELECT count(*)::int AS n FROM sessions
       WHERE key_id = ${keyParam} AND status IN ${LIVE}) live,
      (SELECT count(*)::int AS n FROM sessions
       WHERE livekit_url = ${urlParam} AND room_name = ${roomParam} AND key_id <> ${keyParam}
         AND status IN ${LIVE}) others
    WHERE k.id = ${keyParam}`;
}

interface VerdictRow {
  cap: number;
  active: number;
  refused: CapacityRefusal['refused'] | null;
}

/**
 * One statement: the key's count, the room's and the node's, and, when none refuses, the room
 * claimed for the key and the session inserted. Alone on the embedded database; on PostgreSQL
 * after lockKeyAndRoom (with the node's lock), in the same transaction.
 */
export async function checkAndInsert(
  db: Queryable,
  s: NewSession,
  nodeId: string,
  capacity: number,
): Promise<{ session: SessionRecord; active: number; cap: number } | CapacityRefusal> {
  const onNode = `WHEN (SELECT count(*)::int FROM sessions
      WHERE node_id = $3::text AND status IN ${LIVE}) >= $15::int THEN 'platform_busy'`;
  const r = await db.query<VerdictRow & Partial<SessionRow>>(
    `WITH verdict AS (${verdictOf('$2::text', '$8::text', '$9::text', onNode)}),
       claimed AS (
         INSERT INTO room_claims (livekit_url, room_name, key_id)
         SELECT $8::text, $9::text, $2::text FROM verdict WHERE refused IS NULL
         ON CONFLICT (livekit_url, room_name) DO UPDATE SET key_id = EXCLUDED.key_id
         WHERE room_claims.key_id <> EXCLUDED.key_id),
       inserted AS (
         INSERT INTO sessions (${INSERTED_COLUMNS})
         SELECT ${insertedValues} FROM verdict WHERE refused IS NULL
         RETURNING *)
     SELECT verdict.cap, verdict.active, verdict.refused, inserted.*
     FROM verdict LEFT JOIN inserted ON true`,
    [...insertedParams(s, nodeId), capacity],
  );
  const row = r.rows[0];
  if (!row) throw new Error(`no key ${s.keyId} to create a session for`);
  const { cap, active, refused } = row;
  if (refused !== null) return { refused, active, cap };
  return { session: sessionFromRow(row as SessionRow), active: active + 1, cap };
}

/**
 * PostgreSQL, after lockKeyAndRoom (cluster placement): the key's count and the room's, and the
 * room's claim made the key's when no other key has a live session in it.
 */
async function checkKeyAndRoom(
  tx: Queryable,
  s: NewSession,
): Promise<{ active: number; cap: number } | CapacityRefusal> {
  const r = await tx.query<VerdictRow>(
    `WITH verdict AS (${verdictOf('$1::text', '$2::text', '$3::text')}),
       claimed AS (
         UPDATE room_claims SET key_id = $1::text
         WHERE livekit_url = $2::text AND room_name = $3::text AND key_id <> $1::text
           AND (SELECT refused FROM verdict) IS NULL)
     SELECT cap, active, refused FROM verdict`,
    [s.keyId, s.livekitUrl, s.roomName],
  );
  const row = r.rows[0];
  if (!row) throw new Error(`no key ${s.keyId} to create a session for`);
  const { cap, active, refused } = row;
  return refused === null ? { active, cap } : { refused, active, cap };
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
