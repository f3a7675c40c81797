// SPDX-License-Identifier: GPL-3.0-or-later
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeAtlasFile, encodeAtlasFile } from './atlasFile.js';
import { EYE_RECT, MOUTH_RECT, type Rect } from './faceGeometry.js';
import { adoptSharedAtlas, shareAvatarAtlas, type SharedAvatarAtlas } from './sharedAtlas.js';
import { avatarAtlasAsync } from './spriteAtlas.js';

/**
 * Avatar atlases kept on disk between runs (in the data directory), so a warm start loads in
 * milliseconds what took a second of CPU per avatar to draw.
 *
 * One file per avatar: `atlas-<avatarId>-<key>.bin`. The key hashes the cache format, the byte
 * order and the renderer's code, so any change to the drawing code (a new release, a local edit)
 * misses the cache and rebuilds. Every load checks the payload's SHA-256 and the layout against
 * the atlas shape this code expects; a file that fails either is rebuilt and replaced.
 */

/** Bump when the file layout changes. */
const FORMAT = 'visage-atlas-3';

export type AtlasSource = 'cache' | 'built';

export interface CachedAtlasOutcome {
  avatarId: string;
  /** `cache`: loaded from disk; `built`: drawn now (and stored, unless `storeError`). */
  source: AtlasSource;
  ms: number;
  /** Why a cache file was not used (missing is not a reason), e.g. a checksum mismatch. */
  rejected?: string;
  /** Why the built atlas could not be stored (the next start builds it again). */
  storeError?: string;
}

/**
 * Makes the avatar's atlas ready in this process: from `cacheDir` when a valid file is there,
 * else drawn (in steps that leave the event loop free) and stored for the next start.
 */
export async function prepareAvatarCached(
  avatarId: string,
  cacheDir: string,
): Promise<CachedAtlasOutcome> {
  const started = performance.now();
  const key = cacheKey(avatarId);
  const path = join(cacheDir, `${filePrefix(avatarId)}${key}.bin`);
  let rejected: string | undefined;
  try {
    const shared = decode(await readFile(path), avatarId, key);
    adoptSharedAtlas(shared);
    return { avatarId, source: 'cache', ms: performance.now() - started };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') rejected = (err as Error).message;
  }
  await avatarAtlasAsync(avatarId);
  const shared = shareAvatarAtlas(avatarId);
  let storeError: string | undefined;
  try {
    await store(cacheDir, path, encode(shared, key));
    await removeStale(cacheDir, avatarId, path);
  } catch (err) {
    storeError = (err as Error).message;
  }
  return {
    avatarId,
    source: 'built',
    ms: performance.now() - started,
    ...(rejected ? { rejected } : {}),
    ...(storeError ? { storeError } : {}),
  };
}

/**
 * The avatar's atlas file as stored in `cacheDir` (what a renderer outside this process reads),
 * and its key: read when a valid one is there, else made ready as `prepareAvatarCached` does and
 * encoded from this process's copy.
 */
export async function atlasFileCached(
  avatarId: string,
  cacheDir: string,
): Promise<{ bytes: Buffer; key: string }> {
  const key = cacheKey(avatarId);
  const path = join(cacheDir, `${filePrefix(avatarId)}${key}.bin`);
  try {
    const bytes = await readFile(path);
    decode(bytes, avatarId, key);
    return { bytes, key };
  } catch {
    // Missing or damaged: made again below (and stored, so the media core finds it too).
  }
  await prepareAvatarCached(avatarId, cacheDir);
  return { bytes: encode(shareAvatarAtlas(avatarId), key), key };
}

const filePrefix = (avatarId: string) => `atlas-${avatarId}-`;

export function cacheKey(avatarId: string): string {
  return createHash('sha256')
    .update(`${FORMAT}\0${endianness()}\0${avatarId}\0${rendererFingerprint()}`)
    .digest('hex')
    .slice(0, 20);
}

let fingerprint: string | undefined;

/**
 * A hash of the code this module was loaded with: the script files of its own directory (the
 * renderer's sources under `src/media/render`, or the bundle's chunks under `dist`). Any edit
 * there changes it. Computed once per process (a few hundred kB to hash).
 */
function rendererFingerprint(): string {
  if (fingerprint) return fingerprint;
  const dir = dirname(fileURLToPath(import.meta.url));
  const hash = createHash('sha256');
  for (const name of readdirSync(dir).sort()) {
    if (!/\.(m?js|ts)$/.test(name) || name.endsWith('.d.ts')) continue;
    hash
      .update(name)
      .update('\0')
      .update(readFileSync(join(dir, name)))
      .update('\0');
  }
  fingerprint = hash.digest('hex');
  return fingerprint;
}

function encode(shared: SharedAvatarAtlas, key: string): Buffer {
  return encodeAtlasFile(shared, { format: FORMAT, key });
}

function decode(file: Buffer, avatarId: string, key: string): SharedAvatarAtlas {
  const { shared } = decodeAtlasFile(file, { format: FORMAT, key, avatarId });
  // A catalogue avatar's sprites sit where the shared face geometry puts them.
  const { layout } = shared;
  const same = (a: Rect, b: Rect) =>
    a.x === b.x && a.y === b.y && a.width === b.width && a.height === b.height;
  if (
    !same(layout.eyes.rect, EYE_RECT) ||
    !same(layout.mouths.rect, MOUTH_RECT) ||
    !same(layout.mouthRegion, MOUTH_RECT)
  ) {
    throw new Error('layout has another shape');
  }
  return shared;
}

async function store(dir: string, path: string, bytes: Buffer): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  // Write then rename: a crash never leaves a half-written atlas under the real name.
  await writeFile(tmp, bytes, { mode: 0o600 });
  await rename(tmp, path);
}

/** Files of this avatar from other code versions: nothing will read them again. */
async function removeStale(dir: string, avatarId: string, keep: string): Promise<void> {
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    if (name.startsWith(filePrefix(avatarId)) && name.endsWith('.bin') && path !== keep) {
      await rm(path, { force: true });
    }
  }
}
