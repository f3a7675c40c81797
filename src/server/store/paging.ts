// SPDX-License-Identifier: GPL-3.0-or-later
import type { Queryable } from './database.js';

/** One page of a list, newest first. */
export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

/** The tables listed page by page: each has a `seq` (bigserial) that orders its rows. */
export type PagedTable = 'files' | 'voices' | 'sessions' | 'avatars';

/** `seq` is an int8: node-postgres returns it as a string, PGlite as a number. */
export type Seq = string | number;

/** Files, voices and avatars are deleted softly (the row stays as a tombstone); lists skip them. */
export const LIVE_ROW_OF_KEY = 'key_id = $2 AND deleted_at IS NULL';

/**
 * Newest-first pagination on the `seq` column with an `after=<id>` cursor. `where` is written
 * with placeholders from $2 (the cursor's id is $1 in its lookup); `R` is the table's row.
 */
export async function page<R extends { seq: Seq }, T>(
  db: Queryable,
  table: PagedTable,
  where: string,
  params: unknown[],
  limit: number,
  after: string | undefined,
  map: (r: R) => T,
): Promise<Page<T> | 'unknown_cursor'> {
  let cursor = '';
  const args = [...params];
  if (after) {
    const found = await db.query<{ seq: Seq }>(
      `SELECT seq FROM ${table} WHERE id = $1 AND ${where}`,
      [after, ...params],
    );
    if (!found.rows[0]) return 'unknown_cursor';
    args.push(found.rows[0].seq);
    cursor = ` AND seq < $${args.length}`;
  }
  args.push(limit + 1);
  const rows = await db.query<R>(
    `SELECT * FROM ${table} WHERE ${renumber(where)}${cursor} ORDER BY seq DESC LIMIT $${args.length}`,
    args,
  );
  return { items: rows.rows.slice(0, limit).map(map), hasMore: rows.rows.length > limit };
}

/** `where` placeholders start at $2 (after the cursor id); in the list query they start at $1. */
function renumber(where: string): string {
  return where.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) - 1}`);
}
