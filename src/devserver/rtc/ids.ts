// SPDX-License-Identifier: GPL-3.0-or-later
import { randomBytes } from 'node:crypto';

// The official SDKs parse these prefixes (the Rust SDK unwraps on them), so every id the server
// hands out carries the same prefix LiveKit uses for that kind of object.
export type IdPrefix = 'RM_' | 'PA_' | 'TR_' | 'AJ_' | 'AD_' | 'AW_' | 'ND_';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(12);
  let id = prefix;
  for (const byte of bytes) id += ALPHABET[byte % ALPHABET.length];
  return id;
}
