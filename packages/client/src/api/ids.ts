// SPDX-License-Identifier: Apache-2.0
import { z } from 'zod';
import { ID_BODY_LENGTH, ID_PREFIXES, idPattern, isIdOf, type IdPrefix } from './idFormat.js';
import { lineText } from './text.js';

export function idSchema(...prefixes: IdPrefix[]) {
  return z
    .string()
    .regex(idPattern(prefixes), `must be an id starting with ${prefixes.join(' or ')}`);
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
