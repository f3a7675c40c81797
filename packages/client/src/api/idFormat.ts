// SPDX-License-Identifier: Apache-2.0
/**
 * What an identifier looks like, without zod: the face stream's reader (`@visage-avatar/client/face`,
 * loaded in browsers) checks ids with it and stays small; the schemas are in `ids.ts`.
 */

/** Every identifier is a prefix plus 24 base62 characters from a CSPRNG (docs/decisions.md). */
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
export const ID_BODY_LENGTH = 24;

/**
 * Bytes from the CSPRNG, drawn 4 KiB at a time and each used once: one system call per request
 * (every answer carries a new request id) cost tens of microseconds under a burst. Web Crypto's
 * (Node's `globalThis.crypto` is the same CSPRNG as `node:crypto`), so that the wire contract
 * also loads in a browser (`@visage-avatar/web` reads the face stream with it).
 */
const randomPool = { bytes: new Uint8Array(0), next: 0 };

function randomByte(): number {
  if (randomPool.next === randomPool.bytes.length) {
    randomPool.bytes = globalThis.crypto.getRandomValues(new Uint8Array(4096));
    randomPool.next = 0;
  }
  return randomPool.bytes[randomPool.next++]!;
}

/** Unbiased base62 by rejection sampling: bytes >= 248 (= 4 * 62) are discarded. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
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

const idPatterns = new Map<string, RegExp>();

/** The pattern of an id with one of the prefixes. */
export function idPattern(prefixes: readonly IdPrefix[]): RegExp {
  const key = prefixes.join('|');
  let pattern = idPatterns.get(key);
  if (!pattern) {
    pattern = new RegExp(`^(${key})[0-9A-Za-z]{${ID_BODY_LENGTH}}$`);
    idPatterns.set(key, pattern);
  }
  return pattern;
}

/** Whether `value` is a well-formed id with one of the prefixes (checked before any lookup). */
export function isIdOf(prefixes: readonly IdPrefix[], value: string): boolean {
  return idPattern(prefixes).test(value);
}
