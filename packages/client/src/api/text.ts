// SPDX-License-Identifier: Apache-2.0
import { z } from 'zod';

/* eslint-disable no-control-regex -- matching control characters is the point of these two. */
/** C0 and C1 control characters and DEL: never meaningful in a name, an id or a URL. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;
/** The same, except tab, line feed and carriage return, which prose may hold. */
const CONTROL_CHARACTERS_BUT_LINE_BREAKS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
/* eslint-enable no-control-regex */

/**
 * A single-line free string (names, URLs, cursors): control characters (NUL etc.) are refused
 * with 400 `validation_failed` (docs/api.md, "Input hygiene").
 */
export function lineText() {
  return z
    .string()
    .refine((s) => !CONTROL_CHARACTERS.test(s), 'must not contain control characters');
}

/** Free prose (what the avatar says): tabs and line breaks are allowed, other controls not. */
export function proseText() {
  return z
    .string()
    .refine(
      (s) => !CONTROL_CHARACTERS_BUT_LINE_BREAKS.test(s),
      'must not contain control characters other than tabs and line breaks',
    );
}
