// SPDX-License-Identifier: GPL-3.0-or-later
import { createHash } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { findAvatarByDesign } from '../../media/avatarCatalogue.js';
import { PHOTO_BUILD_FORMAT } from '../../media/photo/index.js';
import { atlasCacheKey, atlasFileCached } from '../../media/render/index.js';
import type { AvatarRecord } from '../store/store.js';
import { BackgroundCompressor, compressFast } from './atlasCompression.js';
import type { FileStorage } from './fileStorage.js';

/**
 * The atlas files browsers fetch (`GET /v1/avatars/{id}/atlas`), compressed once per avatar and
 * atlas version and kept on disk (`<dataDir>/cache/atlas-web`): brotli at quality 9 and gzip,
 * made when the avatar is made (a photo avatar's build stored; the stock avatars once the node
 * has started), in a child process at the lowest priority, one avatar at a time, so that it
 * never takes the CPU of live sessions and a session's create never waits for it.
 *
 * A fetch that comes before the kept files exist (the avatar was made on another node, the
 * renderer changed, a compression failed) is answered at once with a fast compression that is
 * not kept (atlasCompression.ts), and starts the kept one again.
 *
 * The version of a stock avatar's atlas is the renderer's cache key (it changes with the drawing
 * code); a photo avatar's is its build blob, written once when the avatar is made and never
 * again. A new version replaces the avatar's older files.
 */

export type AtlasEncoding = 'br' | 'gzip' | 'identity';

export interface DeliveredAtlas {
  bytes: Uint8Array;
  encoding: AtlasEncoding;
  /** The version (hex), the same for every encoding; the ETag adds the encoding. */
  version: string;
  /** False for a fast compression (the kept one is not ready): no cache should keep it. */
  kept: boolean;
}

const EXTENSIONS: Record<Exclude<AtlasEncoding, 'identity'>, string> = { br: 'br', gzip: 'gz' };

export interface AtlasDeliveryOptions {
  /** Where the compressed files are kept. */
  dir: string;
  /** Where the renderer keeps stock atlases (`<dataDir>/cache`). */
  renderCacheDir: string;
  files: FileStorage;
  log: Logger;
}

export class AtlasDelivery {
  /** Kept compressions queued or under way, by `<avatar id>-<version>`. */
  private readonly preparing = new Map<string, Promise<void>>();
  /** The last of them: each starts when the one before has ended. */
  private queue: Promise<void> = Promise.resolve();
  /** Fast compressions under way, by file path: a second fetch for one waits for the first. */
  private readonly fast = new Map<string, Promise<Uint8Array>>();
  /** Avatars deleted while a compression of theirs was queued: its files go when it ends. */
  private readonly forgotten = new Set<string>();
  private readonly compressor = new BackgroundCompressor();
  private closed = false;

  constructor(private readonly o: AtlasDeliveryOptions) {}

  /** The version of the avatar's atlas (what its ETags name). */
  version(avatar: AvatarRecord): string {
    return versionOf(avatar);
  }

  /** The avatar's atlas in `encoding`: the kept file, or a fast compression until there is one. */
  async atlas(avatar: AvatarRecord, encoding: AtlasEncoding): Promise<DeliveredAtlas> {
    const version = versionOf(avatar);
    if (encoding === 'identity') {
      return { bytes: await this.raw(avatar), encoding, version, kept: true };
    }
    const path = this.pathOf(safeId(avatar.id), version, encoding);
    try {
      return { bytes: await readFile(path), encoding, version, kept: true };
    } catch {
      // Not made yet, or not readable: the fetch is answered all the same, and the kept file
      // made (again).
    }
    void this.prepare(avatar);
    let made = this.fast.get(path);
    if (!made) {
      made = this.raw(avatar)
        .then((raw) => compressFast(raw, encoding))
        .finally(() => this.fast.delete(path));
      this.fast.set(path, made);
    }
    return { bytes: await made, encoding, version, kept: false };
  }

  /**
   * Compresses the avatar's atlas to keep (brotli and gzip) unless it is on disk already: in a
   * child process at the lowest priority, after the compressions queued before. Never rejects:
   * a failure is logged, and the avatar's next fetch starts it again.
   */
  prepare(avatar: AvatarRecord): Promise<void> {
    let id: string;
    let version: string;
    try {
      id = safeId(avatar.id);
      version = versionOf(avatar);
    } catch (err) {
      this.o.log.warn({ err, avatar_id: avatar.id }, 'atlas not compressed');
      return Promise.resolve();
    }
    const key = `${id}-${version}`;
    const queued = this.preparing.get(key);
    if (queued) return queued;
    const run = this.queue
      .then(() => this.compressKept(avatar, id, version))
      .catch((err: unknown) => {
        if (this.closed || this.forgotten.has(id)) return;
        this.o.log.warn(
          { err, avatar_id: id },
          'atlas not compressed (tried again at its next fetch)',
        );
      })
      .finally(() => {
        this.preparing.delete(key);
        if (!this.underWay(id)) this.forgotten.delete(id);
      });
    this.preparing.set(key, run);
    this.queue = run;
    return run;
  }

  /** Removes an avatar's compressed files (it was deleted). */
  async forget(avatarId: string): Promise<void> {
    const id = safeId(avatarId);
    // A compression queued or under way would write its files after the removal: it removes
    // them itself.
    if (this.underWay(id)) this.forgotten.add(id);
    await this.removeOthers(id, []);
  }

  /** Ends the compression under way and starts no other (the node closes). */
  close(): void {
    this.closed = true;
    this.compressor.stopAll();
  }

  private pathOf(id: string, version: string, encoding: 'br' | 'gzip'): string {
    return join(this.o.dir, `${id}-${version}.${EXTENSIONS[encoding]}`);
  }

  private underWay(id: string): boolean {
    return [...this.preparing.keys()].some((key) => key.startsWith(`${id}-`));
  }

  /** The atlas file itself: a photo avatar's build, or the stock atlas the renderer caches. */
  async raw(avatar: AvatarRecord): Promise<Uint8Array> {
    if (avatar.source === 'photo' && avatar.buildBlobId) {
      return this.o.files.get(avatar.buildBlobId);
    }
    const stock = findAvatarByDesign(avatar.design ?? '');
    if (!stock) throw new Error(`avatar ${avatar.id} has no atlas`);
    return (await atlasFileCached(stock.avatarId, this.o.renderCacheDir)).bytes;
  }

  private async compressKept(avatar: AvatarRecord, id: string, version: string): Promise<void> {
    if (this.closed || this.forgotten.has(id)) return;
    const br = this.pathOf(id, version, 'br');
    const gz = this.pathOf(id, version, 'gzip');
    if ((await exists(br)) && (await exists(gz))) {
      this.o.log.debug({ avatar_id: id, version }, 'atlas kept before: not compressed again');
      return;
    }
    const raw = await this.raw(avatar);
    await mkdir(this.o.dir, { recursive: true, mode: 0o700 });
    // Written under other names, then renamed: a crash never leaves a half-written file under
    // the served name.
    const tmp = (path: string) => `${path}.${process.pid}.tmp`;
    const started = performance.now();
    try {
      const made = await this.compressor.compress(raw, tmp(br), tmp(gz));
      await rename(tmp(gz), gz);
      await rename(tmp(br), br);
      this.o.log.info(
        {
          avatar_id: id,
          version,
          raw_bytes: raw.byteLength,
          br_bytes: made.brBytes,
          gzip_bytes: made.gzipBytes,
          br_ms: Math.round(made.brMs),
          gzip_ms: Math.round(made.gzipMs),
          wall_ms: Math.round(performance.now() - started),
          nice: made.nice,
        },
        'atlas compressed for browsers',
      );
    } finally {
      await Promise.all([rm(tmp(br), { force: true }), rm(tmp(gz), { force: true })]);
    }
    await this.removeOthers(id, this.forgotten.has(id) ? [] : [br, gz]);
  }

  /** The avatar's files other than `keep` (older versions), or all of them. */
  private async removeOthers(id: string, keep: string[]): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.o.dir);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(this.o.dir, name);
      if (name.startsWith(`${id}-`) && !keep.includes(path) && !name.endsWith('.tmp')) {
        await rm(path, { force: true, recursive: true });
      }
    }
  }
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

function versionOf(avatar: AvatarRecord): string {
  if (avatar.source === 'photo' && avatar.buildBlobId) {
    return createHash('sha256')
      .update(`${PHOTO_BUILD_FORMAT}\0${avatar.buildBlobId}`)
      .digest('hex')
      .slice(0, 20);
  }
  const stock = findAvatarByDesign(avatar.design ?? '');
  if (!stock) throw new Error(`avatar ${avatar.id} has no atlas`);
  return atlasCacheKey(stock.avatarId);
}

/** Avatar ids are checked before any handler (pathIds.ts); a file name takes nothing else. */
function safeId(id: string): string {
  if (!/^[A-Za-z0-9_]+$/.test(id)) throw new Error('not an avatar id');
  return id;
}

/**
 * The encoding to answer with: brotli when `Accept-Encoding` takes it, else gzip, else none
 * (a `q=0` refuses one; `*` takes any).
 */
export function chooseAtlasEncoding(acceptEncoding: string | undefined): AtlasEncoding {
  const accepted = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)).find((m) => m);
    accepted.set(name, q ? Number(q[1]) : 1);
  }
  const takes = (name: string) => (accepted.get(name) ?? accepted.get('*') ?? 0) > 0;
  if (takes('br')) return 'br';
  if (takes('gzip')) return 'gzip';
  return 'identity';
}
