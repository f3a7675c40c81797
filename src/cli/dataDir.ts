// SPDX-License-Identifier: GPL-3.0-or-later
import { resolve } from 'node:path';
import type { Environment } from './environment.js';

/** --data-dir, else $VISAGE_DATA_DIR, else ./.visage (relative to the working directory). */
export function dataDirFrom(flag: string | undefined, env: Environment): string {
  return resolve(flag ?? env.VISAGE_DATA_DIR ?? '.visage');
}
