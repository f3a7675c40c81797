// SPDX-License-Identifier: Apache-2.0
import type { AvatarFace } from './options.js';

/** Job metadata beyond this is not read for the face (a page's ask is a few bytes). */
const MAX_METADATA_CHARS = 4096;

/**
 * The face a room's creator asked for when it dispatched the agent: the job's metadata as JSON
 * with `face` `"client"` or `"video"` (`visage dev`'s playground sends `{"face":"client"}` for an
 * avatar drawn in the browser). Undefined when the metadata asks nothing: not JSON, no `face`, or
 * another value (an agent's own metadata is its business, so nothing here is an error).
 */
export function dispatchedFace(metadata: string | undefined): AvatarFace | undefined {
  if (!metadata || metadata.length > MAX_METADATA_CHARS) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(metadata);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || !('face' in parsed)) return undefined;
  const { face } = parsed;
  return face === 'client' || face === 'video' ? face : undefined;
}
