// SPDX-License-Identifier: GPL-3.0-or-later
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { deserialize, serialize } from 'node:v8';

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
    rmdirSync(lock);
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
    rmdirSync(lock);
  }
}

/** Creating a folder is atomic: whoever creates it holds the lock (the callers' hooks time out). */
export async function takeLock(path: string): Promise<void> {
  for (;;) {
    try {
      mkdirSync(path);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      await sleep(100);
    }
  }
}
