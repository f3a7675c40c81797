// SPDX-License-Identifier: GPL-3.0-or-later
import type { Queryable } from './database.js';
import { LIVE_ROW_OF_KEY, page, type Page, type Seq } from './paging.js';

/**
 * Every avatar (`avatars`), stock ones included (seeded at start from the catalogue, no key), so
 * that one lookup serves both.
 */

/** An avatar: a stock one (drawn from a design, no key) or a photo avatar of one key. */
export interface AvatarRecord {
  id: string;
  /** The owning key; null for stock avatars (everyone's). */
  keyId: string | null;
  name: string;
  description: string | null;
  source: 'stock' | 'photo';
  defaultVoiceId: string;
  /** Stock: the face design the renderer draws. */
  design: string | null;
  /** Photo: the stored picture, the renderer's build and the preview PNG (file storage ids). */
  imageBlobId: string | null;
  buildBlobId: string | null;
  previewBlobId: string | null;
  createdAt: Date;
}

export type NewAvatar = Omit<AvatarRecord, 'createdAt'>;

/** A stock avatar as the catalogue that ships with the code describes it. */
export interface StockAvatar {
  id: string;
  name: string;
  description: string;
  defaultVoiceId: string;
  design: string;
}

/** A row of `avatars`. */
interface AvatarRow {
  id: string;
  seq: Seq;
  key_id: string | null;
  name: string;
  description: string | null;
  /** Only this code writes it: 'stock' or 'photo'. */
  source: AvatarRecord['source'];
  default_voice_id: string;
  design: string | null;
  image_blob_id: string | null;
  build_blob_id: string | null;
  preview_blob_id: string | null;
  created_at: Date;
  deleted_at: Date | null;
}

function avatarFromRow(r: AvatarRow): AvatarRecord {
  return {
    id: r.id,
    keyId: r.key_id ?? null,
    name: r.name,
    description: r.description ?? null,
    source: r.source,
    defaultVoiceId: r.default_voice_id,
    design: r.design ?? null,
    imageBlobId: r.image_blob_id ?? null,
    buildBlobId: r.build_blob_id ?? null,
    previewBlobId: r.preview_blob_id ?? null,
    createdAt: new Date(r.created_at),
  };
}

/**
 * Makes the stock rows match the catalogue that ships with this code (inserted on the first
 * start, their text refreshed on later ones; ids never change). Safe on several nodes at once.
 */
export async function seedStockAvatars(
  db: Queryable,
  stock: readonly StockAvatar[],
  createdAt: Date,
): Promise<void> {
  for (const a of stock) {
    await db.query(
      `INSERT INTO avatars (id, key_id, name, description, source, default_voice_id, design,
         created_at)
       VALUES ($1, NULL, $2, $3, 'stock', $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, description = EXCLUDED.description,
         default_voice_id = EXCLUDED.default_voice_id, design = EXCLUDED.design`,
      [a.id, a.name, a.description, a.defaultVoiceId, a.design, createdAt.toISOString()],
    );
  }
}

export async function insertAvatar(db: Queryable, a: NewAvatar): Promise<AvatarRecord> {
  const r = await db.query<AvatarRow>(
    `INSERT INTO avatars (id, key_id, name, description, source, default_voice_id, design,
       image_blob_id, build_blob_id, preview_blob_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now()) RETURNING *`,
    [
      a.id,
      a.keyId,
      a.name,
      a.description,
      a.source,
      a.defaultVoiceId,
      a.design,
      a.imageBlobId,
      a.buildBlobId,
      a.previewBlobId,
    ],
  );
  return avatarFromRow(r.rows[0]!);
}

/** A stock avatar, or a photo avatar of this key; never a deleted one. */
export async function getAvatar(
  db: Queryable,
  keyId: string,
  id: string,
): Promise<AvatarRecord | undefined> {
  const r = await db.query<AvatarRow>(
    `SELECT * FROM avatars WHERE id = $1 AND (key_id = $2 OR key_id IS NULL)
       AND deleted_at IS NULL`,
    [id, keyId],
  );
  return r.rows[0] ? avatarFromRow(r.rows[0]) : undefined;
}

/** A live avatar by id, of any key or none (a signed atlas URL names no key). */
export async function findAvatar(db: Queryable, id: string): Promise<AvatarRecord | undefined> {
  const r = await db.query<AvatarRow>(
    'SELECT * FROM avatars WHERE id = $1 AND deleted_at IS NULL',
    [id],
  );
  return r.rows[0] ? avatarFromRow(r.rows[0]) : undefined;
}

/** The stock avatars, in catalogue order. */
export async function listStockAvatars(db: Queryable): Promise<AvatarRecord[]> {
  const r = await db.query<AvatarRow>(
    `SELECT * FROM avatars WHERE key_id IS NULL AND deleted_at IS NULL ORDER BY seq`,
  );
  return r.rows.map(avatarFromRow);
}

export function listPhotoAvatars(
  db: Queryable,
  keyId: string,
  limit: number,
  after?: string,
): Promise<Page<AvatarRecord> | 'unknown_cursor'> {
  return page(db, 'avatars', LIVE_ROW_OF_KEY, [keyId], limit, after, avatarFromRow);
}

/**
 * Marks a photo avatar of this key deleted (the row stays, so deleting again is recognised).
 * Returns the avatar (deleted now or before), or undefined when the key never had it.
 */
export async function deleteAvatar(
  db: Queryable,
  keyId: string,
  id: string,
): Promise<AvatarRecord | undefined> {
  const r = await db.query<AvatarRow>(
    `UPDATE avatars SET deleted_at = COALESCE(deleted_at, now())
     WHERE id = $1 AND key_id = $2 RETURNING *`,
    [id, keyId],
  );
  return r.rows[0] ? avatarFromRow(r.rows[0]) : undefined;
}
