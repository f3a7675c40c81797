// SPDX-License-Identifier: GPL-3.0-or-later
import { idSchema, type IdPrefix } from '@visage-avatar/client/api';

/**
 * Whether a path parameter has the form of an id with one of these prefixes. A malformed id is
 * answered like an unknown one (404), before any lookup.
 */
export function hasIdFormat(id: string | undefined, ...prefixes: IdPrefix[]): id is string {
  return id !== undefined && idSchema(...prefixes).safeParse(id).success;
}
