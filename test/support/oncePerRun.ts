// SPDX-License-Identifier: GPL-3.0-or-later
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { deserialize, serialize } from 'node:v8';
import { processAlive } from '../../src/server/admin/dataDirLock.js';

/**
 * Runs `work` once per test run, however many test files ask for it: the first file to ask runs
 * it, a file that asks meanwhile waits for it (a lock folder in the run's scratch folder,
 * scratchRoot.ts), and later files get the stored answer. For expensive builds that every file
 * would otherwise repeat on the same two cores (the CLI's build, the packages' build with their
 * declarations). `work` answers something JSON can hold.
 *
 * Outside a run's scratch folder (a test file run by another runner) it simply runs `work`. A
 * failed `work` stores nothing: the next file to ask runs it again and fails with its own error.
 */
export async function oncePerRun<T>(name: string, work: () => Promise<T>): Promise<T> {
  const scratch = process.env.VISAGE_TEST_SCRATCH;
  if (!scratch) return work();
  const dir = join(scratch, 'once');
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, `${name}.lock`);
  const answer = join(dir, `${name}.json`);
  await takeLock(lock);
  try {
    if (existsSync(answer)) return (JSON.parse(readFileSync(answer, 'utf8')) as { value: T }).value;
    const value = await work();
    writeFileSync(answer, JSON.stringify({ value }));
    return value;
  } finally {
    releaseLock(lock);
  }
}

/**
 * As oncePerRun, for answers JSON cannot hold (typed arrays, many of them): `work`'s answer for
 * `key` is stored v8-serialised as `<folder>/<key>.v8` in the run's scratch folder. Each call
 * answers its own copy (structured clone), so a caller that sorts or changes what it got changes
 * nobody else's. For measures of the same input that several test files make (built portraits,
 * faces described in the same rendered frame).
 */
export async function storedOncePerRun<T>(
  folder: string,
  key: string,
  work: () => Promise<T>,
): Promise<T> {
  const scratch = process.env.VISAGE_TEST_SCRATCH;
  if (!scratch) return work();
  const dir = join(scratch, folder);
  mkdirSync(dir, { recursive: true });
  const stored = join(dir, `${key}.v8`);
  const lock = join(dir, `${key}.lock`);
  await takeLock(lock);
  try {
    if (existsSync(stored)) return deserialize(readFileSync(stored)) as T;
    const value = await work();
    writeFileSync(stored, serialize(value));
    return value;
  } finally {
    releaseLock(lock);
  }
}

/** How long a file waits for a lock before it fails, naming the holder (no silent hang). */
export const LOCK_WAIT_LIMIT_MS = 10 * 60_000;

/**
 * Takes the lock folder `path`: creating a folder is atomic, so whoever creates it holds the
 * lock. The holder writes who it is inside (`holder.json`: pid, what it runs, since when). A
 * lock whose holder's process has died (a test file killed mid-build) is taken over; one held
 * longer than `limitMs` by a live process fails the waiting file with the holder's name (a
 * piece of work that never ends would otherwise hold every file behind it to its hook time-out).
 */
export async function takeLock(path: string, limitMs = LOCK_WAIT_LIMIT_MS): Promise<void> {
  const started = Date.now();
  for (;;) {
    try {
      mkdirSync(path);
      writeFileSync(join(path, 'holder.json'), JSON.stringify(thisHolder()));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readHolder(path);
    if (holder && !processAlive(holder.pid)) {
      rmSync(path, { recursive: true, force: true });
      continue;
    }
    if (Date.now() - started > limitMs) {
      const who = holder
        ? `process ${holder.pid} (${holder.file}) since ${new Date(holder.since).toISOString()}`
        : 'a process that has not said who it is';
      throw new Error(
        `waited ${Math.round(limitMs / 1000)} s for the lock ${path}, held by ${who}`,
      );
    }
    await sleep(100);
  }
}

/** Gives the lock folder `path` back (its holder record with it). */
export function releaseLock(path: string): void {
  rmSync(path, { recursive: true, force: true });
}

interface Holder {
  pid: number;
  /** The test file (vitest's worker names it), or the script. */
  file: string;
  since: number;
}

const thisHolder = (): Holder => ({
  pid: process.pid,
  file: process.env.VITEST_POOL_ID
    ? `vitest worker ${process.env.VITEST_POOL_ID}`
    : (process.argv[1] ?? 'node'),
  since: Date.now(),
});

/** The lock's holder, or undefined while it has not written itself in yet (or wrote half). */
function readHolder(path: string): Holder | undefined {
  try {
    return JSON.parse(readFileSync(join(path, 'holder.json'), 'utf8')) as Holder;
  } catch {
    return undefined;
  }
}
