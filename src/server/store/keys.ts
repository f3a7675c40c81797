// SPDX-License-Identifier: GPL-3.0-or-later
import { hash } from 'node:crypto';
import type { Database, Queryable } from './database.js';
import { KEYS_CHANNEL, RECONCILE_CHANNEL, releaseSlots } from './clusterStore.js';
import { endLiveSessionsOfKey } from './sessions.js';

/** API keys (`api_keys`): stored hashed, with a hint, a concurrency cap and a revocation time. */

export interface ApiKeyRecord {
  id: string;
  name: string;
  secretHint: string;
  concurrencyCap: number;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface NewKey {
  id: string;
  name: string;
  secret: string;
  cap: number;
}

/** A row of `api_keys`. */
interface KeyRow {
  id: string;
  name: string;
  secret_hash: string;
  secret_hint: string;
  concurrency_cap: number;
  created_at: Date;
  revoked_at: Date | null;
}

function keyFromRow(r: KeyRow): ApiKeyRecord {
  return {
    id: r.id,
    name: r.name,
    secretHint: r.secret_hint,
    concurrencyCap: r.concurrency_cap,
    createdAt: new Date(r.created_at),
    revokedAt: r.revoked_at == null ? null : new Date(r.revoked_at),
  };
}

/** Keys are high-entropy random secrets, so a fast hash is enough (no password KDF needed). */
export function hashSecret(secret: string): string {
  // One call, not a Hash object: every create of a burst is hashed on the listener's thread.
  return hash('sha256', secret, 'hex');
}

export async function insertKey(db: Queryable, k: NewKey): Promise<ApiKeyRecord> {
  const hint = `${k.secret.slice(0, 7)}…${k.secret.slice(-4)}`;
  const r = await db.query<KeyRow>(
    `INSERT INTO api_keys (id, name, secret_hash, secret_hint, concurrency_cap, created_at)
     VALUES ($1, $2, $3, $4, $5, now()) RETURNING *`,
    [k.id, k.name, hashSecret(k.secret), hint, k.cap],
  );
  return keyFromRow(r.rows[0]!);
}

/** The key whose secret hashes to this value; with `activeOnly`, only when not revoked. */
export async function findKeyBySecret(
  db: Queryable,
  secret: string,
  activeOnly: boolean,
): Promise<ApiKeyRecord | undefined> {
  const r = await db.query<KeyRow>(
    `SELECT * FROM api_keys WHERE secret_hash = $1${activeOnly ? ' AND revoked_at IS NULL' : ''}`,
    [hashSecret(secret)],
  );
  return r.rows[0] ? keyFromRow(r.rows[0]) : undefined;
}

export async function getKey(db: Queryable, id: string): Promise<ApiKeyRecord | undefined> {
  const r = await db.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [id]);
  return r.rows[0] ? keyFromRow(r.rows[0]) : undefined;
}

export async function listKeys(db: Queryable): Promise<ApiKeyRecord[]> {
  const r = await db.query<KeyRow>('SELECT * FROM api_keys ORDER BY created_at DESC');
  return r.rows.map(keyFromRow);
}

/**
 * Revokes a key and, in the same transaction, ends its live sessions (`key_revoked`): nothing
 * can drive them any more. Returns the key and the ids of the sessions it ended. `shared`: the
 * database is a cluster's, whose nodes are told to forget the key.
 */
export function revokeKey(
  db: Database,
  id: string,
  shared: boolean,
): Promise<{ key: ApiKeyRecord; endedSessions: string[] } | undefined> {
  return db.transaction(async (tx) => {
    const r = await tx.query<KeyRow>(
      'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING *',
      [id],
    );
    if (!r.rows[0]) return undefined;
    const ended = await endLiveSessionsOfKey(tx, id, 'key_revoked');
    await releaseSlots(
      tx,
      ended.map((s) => s.nodeId),
    );
    // The nodes running them stop their media now (cluster.ts listens; nobody else does).
    if (ended.length > 0) await tx.query(`SELECT pg_notify($1, '')`, [RECONCILE_CHANNEL]);
    // Every node forgets what it remembers of the key (delivered when this commits).
    if (shared) await tx.query('SELECT pg_notify($1, $2)', [KEYS_CHANNEL, id]);
    return { key: keyFromRow(r.rows[0]), endedSessions: ended.map((s) => s.id) };
  });
}

/** A key's new cap; `shared` as for revokeKey. */
export async function setKeyCap(
  db: Database,
  id: string,
  cap: number,
  shared: boolean,
): Promise<ApiKeyRecord | undefined> {
  const row = await db.transaction(async (tx) => {
    const updated = await tx.query<KeyRow>(
      'UPDATE api_keys SET concurrency_cap = $2 WHERE id = $1 RETURNING *',
      [id, cap],
    );
    // Every node forgets what it remembers of the key (delivered when this commits).
    if (updated.rows[0] && shared) await tx.query('SELECT pg_notify($1, $2)', [KEYS_CHANNEL, id]);
    return updated.rows[0];
  });
  return row ? keyFromRow(row) : undefined;
}
