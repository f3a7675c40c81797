// SPDX-License-Identifier: GPL-3.0-or-later
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Store } from '../store/store.js';

/**
 * File bytes by id (uploaded clips, voice data); their metadata is in the Store. On the embedded
 * store they are files in the data directory; on a shared PostgreSQL server they are rows of the
 * `blobs` table, so that every node reads what any node wrote.
 */
export interface FileStorage {
  put(id: string, bytes: Uint8Array): Promise<void>;
  /** The bytes; rejects (ENOENT) when there is no such file. */
  get(id: string): Promise<Uint8Array>;
  /** Idempotent. */
  delete(id: string): Promise<void>;
}

/** The storage that goes with a store: on disk beside PGlite, in the database with PostgreSQL. */
export function fileStorageFor(store: Store, dataDir: string): FileStorage {
  return store.kind === 'postgres' ? new DatabaseFileStorage(store) : new DiskFileStorage(dataDir);
}

/** One file per id under `<dataDir>/files`. */
export class DiskFileStorage implements FileStorage {
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'files');
  }

  async put(id: string, bytes: Uint8Array): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = join(this.dir, `.${id}.tmp`);
    // Write then rename: a crash never leaves a half-written clip under the real name.
    await writeFile(tmp, bytes, { mode: 0o600 });
    await rename(tmp, join(this.dir, id));
  }

  get(id: string): Promise<Uint8Array> {
    return readFile(join(this.dir, id));
  }

  async delete(id: string): Promise<void> {
    await rm(join(this.dir, id), { force: true });
  }
}

/** Rows of the shared database's `blobs` table (one `bytea` per file, at most 20 MiB). */
export class DatabaseFileStorage implements FileStorage {
  constructor(private readonly store: Store) {}

  put(id: string, bytes: Uint8Array): Promise<void> {
    return this.store.putBlob(id, bytes);
  }

  async get(id: string): Promise<Uint8Array> {
    const bytes = await this.store.getBlob(id);
    if (!bytes) {
      throw Object.assign(new Error(`no stored file ${id}`), { code: 'ENOENT' });
    }
    return bytes;
  }

  delete(id: string): Promise<void> {
    return this.store.deleteBlob(id);
  }
}
