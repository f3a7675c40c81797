import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/** Every identifier is a prefix plus 24 base62 characters from a CSPRNG (API-DECISIONS.md). */
export const ID_PREFIXES = {
  file: 'file_',
  clonedVoice: 'vc_',
  stockVoice: 'voice_',
  avatar: 'avt_',
  session: 'ses_',
  utterance: 'utt_',
  request: 'req_',
  secretKey: 'sk_',
  key: 'key_',
} as const;

export type IdPrefix = (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES];

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ID_BODY_LENGTH = 24;

/** Unbiased base62 by rejection sampling: bytes >= 248 (= 4 * 62) are discarded. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function newId(prefix: IdPrefix): string {
  return prefix + randomBase62(ID_BODY_LENGTH);
}

/** Secret keys carry more entropy than ids: they are bearer credentials. */
export function newSecretKey(): string {
  return ID_PREFIXES.secretKey + randomBase62(40);
}

export function idSchema(...prefixes: IdPrefix[]) {
  const pattern = new RegExp(`^(${prefixes.join('|')})[0-9A-Za-z]{${ID_BODY_LENGTH}}$`);
  return z.string().regex(pattern, `must be an id starting with ${prefixes.join(' or ')}`);
}
