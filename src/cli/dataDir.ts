import { resolve } from 'node:path';

/** --data-dir, else $VISAGE_DATA_DIR, else ./.visage (relative to the working directory). */
export function dataDirFrom(flag: string | undefined): string {
  return resolve(flag ?? process.env.VISAGE_DATA_DIR ?? '.visage');
}
