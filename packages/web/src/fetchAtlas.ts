// SPDX-License-Identifier: Apache-2.0
import { decodeAtlas, type Atlas, type DecodeAtlasOptions } from './atlas.js';

/** An atlas file larger than this is refused (a photo avatar's is about 10 MB uncompressed). */
export const MAX_ATLAS_BYTES = 64 << 20;

/**
 * Fetches and decodes an avatar's atlas. The URL is its own credential (signed, no API key), so
 * no cookies go with it; the browser's HTTP cache keeps it (the service answers `immutable`). The
 * body is read up to `MAX_ATLAS_BYTES`, so a wrong URL cannot fill the page's memory.
 */
export async function fetchAtlas(url: string, options: DecodeAtlasOptions = {}): Promise<Atlas> {
  const res = await fetch(url, { credentials: 'omit' });
  if (!res.ok) throw new Error(`the atlas could not be fetched: HTTP ${res.status}`);
  if (Number(res.headers.get('content-length') ?? 0) > MAX_ATLAS_BYTES || !res.body) {
    throw new Error('the atlas is too large');
  }
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_ATLAS_BYTES) {
      await reader.cancel();
      throw new Error('the atlas is too large');
    }
    parts.push(value);
  }
  // One buffer of its own: the atlas's arrays are 8-byte aligned views into it.
  const file = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    file.set(part, at);
    at += part.byteLength;
  }
  return decodeAtlas(file.buffer, options);
}
