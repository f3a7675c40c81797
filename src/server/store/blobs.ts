// SPDX-License-Identifier: GPL-3.0-or-later
import type { Queryable } from './database.js';

/** File bytes in a shared database (`blobs`): what FileStorage keeps on disk when embedded. */

export async function putBlob(db: Queryable, id: string, bytes: Uint8Array): Promise<void> {
  await db.query(
    `INSERT INTO blobs (id, bytes, created_at) VALUES ($1, $2, now())
     ON CONFLICT (id) DO UPDATE SET bytes = EXCLUDED.bytes`,
    [id, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)],
  );
}

export async function getBlob(db: Queryable, id: string): Promise<Uint8Array | undefined> {
  // bytea: a Buffer from node-postgres, a Uint8Array from PGlite; a plain copy either way.
  const r = await db.query<{ bytes: Uint8Array }>('SELECT bytes FROM blobs WHERE id = $1', [id]);
  return r.rows[0] ? new Uint8Array(r.rows[0].bytes) : undefined;
}

export async function deleteBlob(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM blobs WHERE id = $1', [id]);
}
