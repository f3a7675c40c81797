// SPDX-License-Identifier: GPL-3.0-or-later
import type { Queryable } from './database.js';
import { LIVE_ROW_OF_KEY, page, type Page, type Seq } from './paging.js';

/** Uploaded clips' metadata (`files`); their bytes are FileStorage's. */

export interface FileRecord {
  id: string;
  keyId: string;
  filename: string;
  contentType: string;
  bytes: number;
  durationMs: number;
  format: string;
  createdAt: Date;
}

/** A row of `files`. */
interface FileRow {
  id: string;
  seq: Seq;
  key_id: string;
  filename: string;
  content_type: string;
  bytes: number;
  duration_ms: number;
  format: string;
  created_at: Date;
  deleted_at: Date | null;
}

function fileFromRow(r: FileRow): FileRecord {
  return {
    id: r.id,
    keyId: r.key_id,
    filename: r.filename,
    contentType: r.content_type,
    bytes: r.bytes,
    durationMs: r.duration_ms,
    format: r.format,
    createdAt: new Date(r.created_at),
  };
}

export async function insertFile(
  db: Queryable,
  f: Omit<FileRecord, 'createdAt'>,
): Promise<FileRecord> {
  const r = await db.query<FileRow>(
    `INSERT INTO files (id, key_id, filename, content_type, bytes, duration_ms, format, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now()) RETURNING *`,
    [f.id, f.keyId, f.filename, f.contentType, f.bytes, f.durationMs, f.format],
  );
  return fileFromRow(r.rows[0]!);
}

/** A file of this key that was not deleted. */
export async function getFile(
  db: Queryable,
  keyId: string,
  id: string,
): Promise<FileRecord | undefined> {
  const r = await db.query<FileRow>(
    'SELECT * FROM files WHERE id = $1 AND key_id = $2 AND deleted_at IS NULL',
    [id, keyId],
  );
  return r.rows[0] ? fileFromRow(r.rows[0]) : undefined;
}

export function listFiles(
  db: Queryable,
  keyId: string,
  limit: number,
  after?: string,
): Promise<Page<FileRecord> | 'unknown_cursor'> {
  return page(db, 'files', LIVE_ROW_OF_KEY, [keyId], limit, after, fileFromRow);
}

/**
 * Marks a file of this key deleted and forgets its name; the row stays so that deleting again
 * is recognised (idempotent). False when the key never had such a file.
 */
export async function deleteFile(db: Queryable, keyId: string, id: string): Promise<boolean> {
  const r = await db.query<{ id: string }>(
    `UPDATE files SET deleted_at = COALESCE(deleted_at, now()), filename = ''
     WHERE id = $1 AND key_id = $2 RETURNING id`,
    [id, keyId],
  );
  return r.rows.length > 0;
}
