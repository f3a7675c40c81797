// SPDX-License-Identifier: GPL-3.0-or-later
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * One process at a time owns a data directory (the embedded database is single-process). The
 * lock file names the owner and, for a running server, its admin socket, so that CLI commands
 * can reach the server instead of opening the database themselves.
 */
export interface LockOwner {
  pid: number;
  role: 'server' | 'cli';
  adminSocket?: string;
}

export class DataDirBusyError extends Error {
  constructor(readonly owner: LockOwner) {
    super(`the data directory is in use by ${owner.role} process ${owner.pid}`);
    this.name = 'DataDirBusyError';
  }
}

export function lockPath(dataDir: string): string {
  return join(dataDir, 'visage.lock');
}

/** Whether a process with this id runs now (one owned by another user counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live owner of the directory, if any (a lock left by a dead process does not count). */
export function readLockOwner(dataDir: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(lockPath(dataDir), 'utf8')) as LockOwner;
    return processAlive(owner.pid) ? owner : undefined;
  } catch {
    return undefined;
  }
}

export interface DataDirLock {
  update(owner: Partial<LockOwner>): void;
  release(): void;
}

export function acquireDataDirLock(dataDir: string, owner: LockOwner): DataDirLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = lockPath(dataDir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, JSON.stringify(owner), { flag: 'wx', mode: 0o600 });
      let current = owner;
      return {
        update: (patch) => {
          current = { ...current, ...patch };
          writeFileSync(path, JSON.stringify(current), { mode: 0o600 });
        },
        release: () => rmSync(path, { force: true }),
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = readLockOwner(dataDir);
      if (holder && holder.pid !== process.pid) throw new DataDirBusyError(holder);
      if (holder) throw new DataDirBusyError(holder);
      rmSync(path, { force: true }); // stale: its process is gone
    }
  }
  throw new Error(`could not lock ${dataDir}`);
}
