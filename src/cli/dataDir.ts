import { resolve } from 'node:path';
import { UsageError } from './usage.js';

/** --data-dir, else $VISAGE_DATA_DIR, else ./.visage (relative to the working directory). */
export function dataDirFrom(flag: string | undefined): string {
  return resolve(flag ?? process.env.VISAGE_DATA_DIR ?? '.visage');
}

/**
 * PostgreSQL for several nodes is planned (the store speaks plain PostgreSQL), not built: a set
 * DATABASE_URL must not be silently ignored while every node writes its own embedded database.
 */
export function rejectUnsupportedDatabaseUrl(): void {
  if (process.env.DATABASE_URL) {
    throw new UsageError(
      'DATABASE_URL is set, but this build stores data only in the embedded database ' +
        '(--data-dir); unset DATABASE_URL',
    );
  }
}
