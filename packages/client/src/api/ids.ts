// SPDX-License-Identifier: Apache-2.0
import { z } from 'zod';
import { lineText } from './text.js';

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
const ID_BODY_LENGTH = 24;

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

export function idSchema(...prefixes: IdPrefix[]) {
  const pattern = new RegExp(`^(${prefixes.join('|')})[0-9A-Za-z]{${ID_BODY_LENGTH}}$`);
  return z.string().regex(pattern, `must be an id starting with ${prefixes.join(' or ')}`);
}

/**
 * Which ids a field or path segment takes, and the 404 code a malformed one answers with: ids
 * are checked against their format before any lookup, and a malformed id is answered exactly
 * like an unknown one (docs/api.md, "Input hygiene").
 */
export interface IdRef {
  readonly prefixes: readonly IdPrefix[];
  readonly notFound:
    'session_not_found' | 'voice_not_found' | 'file_not_found' | 'avatar_not_found';
  /** What the 404 message calls the resource. */
  readonly noun: string;
}

export const SESSION_ID: IdRef = {
  prefixes: [ID_PREFIXES.session],
  notFound: 'session_not_found',
  noun: 'session',
};
export const VOICE_ID: IdRef = {
  prefixes: [ID_PREFIXES.clonedVoice, ID_PREFIXES.stockVoice],
  notFound: 'voice_not_found',
  noun: 'voice',
};
export const FILE_ID: IdRef = {
  prefixes: [ID_PREFIXES.file],
  notFound: 'file_not_found',
  noun: 'file',
};
export const AVATAR_ID: IdRef = {
  prefixes: [ID_PREFIXES.avatar],
  notFound: 'avatar_not_found',
  noun: 'avatar',
};

const idPatterns = new Map<string, RegExp>();

/** Whether `value` is a well-formed id with one of the prefixes (checked before any lookup). */
export function isIdOf(prefixes: readonly IdPrefix[], value: string): boolean {
  const key = prefixes.join('|');
  let pattern = idPatterns.get(key);
  if (!pattern) {
    pattern = new RegExp(`^(${key})[0-9A-Za-z]{${ID_BODY_LENGTH}}$`);
    idPatterns.set(key, pattern);
  }
  return pattern.test(value);
}

/** The zod issue parameter that turns a failed id check into the resource's 404. */
export const NOT_FOUND_PARAM = 'notFound';

/**
 * A body field holding an id. Control characters are a 400 `validation_failed` like in every
 * other string; otherwise a value that is not such an id is answered with the resource's 404
 * (the issue carries `params.notFound`, which the server maps).
 */
export function idRefSchema(ref: IdRef) {
  return lineText()
    .min(1)
    .max(64)
    .refine((s) => isIdOf(ref.prefixes, s), {
      message: `is not a known ${ref.noun}`,
      params: { [NOT_FOUND_PARAM]: ref.notFound },
    })
    .meta({ pattern: `^(${ref.prefixes.join('|')})[0-9A-Za-z]{${ID_BODY_LENGTH}}$` });
}
