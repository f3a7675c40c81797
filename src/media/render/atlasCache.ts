import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VISEMES } from '../lipsync/viseme.js';
import { EYE_RECT, FRAME_HEIGHT, FRAME_WIDTH, MOUTH_RECT, type Rect } from './faceGeometry.js';
import { i420Size } from './i420.js';
import {
  adoptSharedAtlas,
  shareAvatarAtlas,
  type AtlasLayout,
  type SharedAvatarAtlas,
  type SpriteSetLayout,
} from './sharedAtlas.js';
import {
  avatarAtlasAsync,
  BREATH_LEVELS,
  GAZES,
  LID_LEVELS,
  MOUTH_LEVELS,
  SWAY_OFFSETS,
} from './spriteAtlas.js';

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
const FORMAT = 'visage-atlas-1';
const MAGIC = Buffer.from('VSGATLAS', 'ascii');

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

interface Header {
  format: string;
  key: string;
  avatarId: string;
  buildMs: number;
  payloadBytes: number;
  sha256: string;
  layout: AtlasLayout;
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
  const payload = new Uint8Array(shared.buffer);
  const header: Header = {
    format: FORMAT,
    key,
    avatarId: shared.avatarId,
    buildMs: shared.buildMs,
    payloadBytes: payload.byteLength,
    sha256: createHash('sha256').update(payload).digest('hex'),
    layout: shared.layout,
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(json.byteLength);
  const headerBytes = MAGIC.byteLength + 4 + json.byteLength;
  const padding = Buffer.alloc((8 - (headerBytes % 8)) % 8);
  return Buffer.concat([MAGIC, length, json, padding, payload]);
}

function decode(file: Buffer, avatarId: string, key: string): SharedAvatarAtlas {
  if (file.byteLength < MAGIC.byteLength + 4 || !file.subarray(0, MAGIC.byteLength).equals(MAGIC)) {
    throw new Error('not an atlas file');
  }
  const jsonLength = file.readUInt32LE(MAGIC.byteLength);
  const jsonEnd = MAGIC.byteLength + 4 + jsonLength;
  if (jsonEnd > file.byteLength) throw new Error('truncated header');
  const header = JSON.parse(
    file.subarray(MAGIC.byteLength + 4, jsonEnd).toString('utf8'),
  ) as Header;
  if (header.format !== FORMAT || header.key !== key || header.avatarId !== avatarId) {
    throw new Error('header does not match');
  }
  const start = jsonEnd + ((8 - (jsonEnd % 8)) % 8);
  if (file.byteLength - start !== header.payloadBytes) throw new Error('truncated payload');
  const payload = file.subarray(start);
  if (createHash('sha256').update(payload).digest('hex') !== header.sha256) {
    throw new Error('checksum mismatch');
  }
  checkLayout(header.layout, header.payloadBytes);
  const buffer = new SharedArrayBuffer(header.payloadBytes);
  new Uint8Array(buffer).set(payload);
  return { avatarId, buffer, layout: header.layout, buildMs: header.buildMs };
}

/** The layout must describe the atlas this code draws, inside the buffer, aligned. */
function checkLayout(layout: AtlasLayout, bytes: number): void {
  const slot = ([offset, count]: [number, number], elementBytes: number, expected?: number) => {
    const ok =
      Number.isInteger(offset) &&
      Number.isInteger(count) &&
      offset >= 0 &&
      count >= 0 &&
      offset % elementBytes === 0 &&
      offset + count * elementBytes <= bytes &&
      (expected === undefined || count === expected);
    if (!ok) throw new Error('layout does not fit');
  };
  const poses = BREATH_LEVELS * SWAY_OFFSETS.length;
  if (layout.poses.length !== poses || layout.blends.length !== poses - SWAY_OFFSETS.length) {
    throw new Error('layout has another shape');
  }
  for (const p of layout.poses) slot(p, 1, i420Size(FRAME_WIDTH, FRAME_HEIGHT));
  for (const b of layout.blends) {
    slot(b.index, 4);
    slot(b.delta, 2, b.index[1]);
  }
  const sprites = (set: SpriteSetLayout, rect: Rect, count: number) => {
    const same =
      set.rect.x === rect.x &&
      set.rect.y === rect.y &&
      set.rect.width === rect.width &&
      set.rect.height === rect.height;
    if (!same || set.sprites.length !== count) throw new Error('layout has another shape');
    for (const s of set.sprites) slot(s, 1, i420Size(rect.width, rect.height));
    slot(set.lumaSpans, 4);
    slot(set.chromaSpans, 4);
  };
  sprites(layout.eyes, EYE_RECT, GAZES.length * LID_LEVELS.length);
  sprites(layout.mouths, MOUTH_RECT, 1 + (VISEMES.length - 1) * (MOUTH_LEVELS - 1));
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
