// SPDX-License-Identifier: GPL-3.0-or-later
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { releaseLock, takeLock } from './oncePerRun.js';

/** A process id that no process has now (near the top of Linux's range). */
function noProcess(): number {
  for (let pid = 4_194_000; ; pid++) {
    try {
      process.kill(pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return pid;
    }
  }
}

/** The lock folders that let test files share one run's expensive work (oncePerRun.ts). */
describe('a run-wide lock', () => {
  const folder = () => mkdtempSync(join(tmpdir(), 'lock-'));

  it('says who holds it, and is free again once given back', async () => {
    const lock = join(folder(), 'work.lock');
    await takeLock(lock);
    const holder = JSON.parse(readFileSync(join(lock, 'holder.json'), 'utf8')) as { pid: number };
    expect(holder.pid).toBe(process.pid);
    releaseLock(lock);
    expect(existsSync(lock)).toBe(false);
    await takeLock(lock, 1_000);
    releaseLock(lock);
  });

  it('is taken over from a holder whose process has died', async () => {
    const lock = join(folder(), 'work.lock');
    const gone = noProcess();
    mkdirSync(lock);
    writeFileSync(join(lock, 'holder.json'), JSON.stringify({ pid: gone, file: 'x', since: 0 }));
    await takeLock(lock, 5_000);
    const holder = JSON.parse(readFileSync(join(lock, 'holder.json'), 'utf8')) as { pid: number };
    expect(holder.pid).toBe(process.pid);
    releaseLock(lock);
  });

  it('fails a waiter past its limit, naming the live holder', async () => {
    const lock = join(folder(), 'work.lock');
    await takeLock(lock);
    await expect(takeLock(lock, 300)).rejects.toThrow(
      new RegExp(`held by process ${process.pid} `),
    );
    releaseLock(lock);
  });
});
