// SPDX-License-Identifier: GPL-3.0-or-later
import type { Queryable } from './database.js';
import { LIVE_ROW_OF_KEY, page, type Page, type Seq } from './paging.js';

/** Voices made from clips (`voices`): the engine that made each and what it derived. */

export interface VoiceRecord {
  id: string;
  keyId: string;
  name: string;
  fileId: string | null;
  sourceUrl: string | null;
  durationMs: number;
  /** The engine that made the voice (`espeak`, `elevenlabs`, `cartesia`). */
  engine: string;
  /** What that engine derived from the clip (opaque JSON here). */
  profile: unknown;
  createdAt: Date;
}

/** A row of `voices`. */
interface VoiceRow {
  id: string;
  seq: Seq;
  key_id: string;
  name: string;
  file_id: string | null;
  source_url: string | null;
  duration_ms: number;
  /** jsonb, parsed by the driver; NULL once the voice is deleted. */
  profile: unknown;
  engine: string;
  created_at: Date;
  deleted_at: Date | null;
}

function voiceFromRow(r: VoiceRow): VoiceRecord {
  return {
    id: r.id,
    keyId: r.key_id,
    name: r.name,
    fileId: r.file_id ?? null,
    sourceUrl: r.source_url ?? null,
    durationMs: r.duration_ms,
    engine: r.engine,
    profile: r.profile ?? null,
    createdAt: new Date(r.created_at),
  };
}

export async function insertVoice(
  db: Queryable,
  v: Omit<VoiceRecord, 'createdAt'>,
): Promise<VoiceRecord> {
  const r = await db.query<VoiceRow>(
    `INSERT INTO voices (id, key_id, name, file_id, source_url, duration_ms, profile, engine,
       created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now()) RETURNING *`,
    [
      v.id,
      v.keyId,
      v.name,
      v.fileId,
      v.sourceUrl,
      v.durationMs,
      JSON.stringify(v.profile),
      v.engine,
    ],
  );
  return voiceFromRow(r.rows[0]!);
}

/** A voice of this key that was not deleted. */
export async function getVoice(
  db: Queryable,
  keyId: string,
  id: string,
): Promise<VoiceRecord | undefined> {
  const r = await db.query<VoiceRow>(
    'SELECT * FROM voices WHERE id = $1 AND key_id = $2 AND deleted_at IS NULL',
    [id, keyId],
  );
  return r.rows[0] ? voiceFromRow(r.rows[0]) : undefined;
}

export function listVoices(
  db: Queryable,
  keyId: string,
  limit: number,
  after?: string,
): Promise<Page<VoiceRecord> | 'unknown_cursor'> {
  return page(db, 'voices', LIVE_ROW_OF_KEY, [keyId], limit, after, voiceFromRow);
}

/**
 * Marks a voice of this key deleted and drops its speaker profile; live sessions hold their
 * own copy of the profile. False when the key never had such a voice.
 */
export async function deleteVoice(db: Queryable, keyId: string, id: string): Promise<boolean> {
  const r = await db.query<{ id: string }>(
    `UPDATE voices SET deleted_at = COALESCE(deleted_at, now()), profile = NULL
     WHERE id = $1 AND key_id = $2 RETURNING id`,
    [id, keyId],
  );
  return r.rows.length > 0;
}
