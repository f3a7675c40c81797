import { resolve } from 'node:path';
import { UsageError } from './usage.js';

/** --data-dir, else $VISAGE_DATA_DIR, else ./.visage (relative to the working directory). */
export function dataDirFrom(flag: string | undefined): string {
  return resolve(flag ?? process.env.VISAGE_DATA_DIR ?? '.visage');
}

/**
 * $DATABASE_URL (`postgres://user:password@host:port/db`): a PostgreSQL server instead of the
 * embedded database. Anything else set there is refused rather than silently ignored.
 */
export function databaseUrlFromEnv(): string | undefined {
  const url = process.env.DATABASE_URL;
  if (!url) return undefined;
  if (!/^postgres(ql)?:\/\/./.test(url)) {
    throw new UsageError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  return url;
}
