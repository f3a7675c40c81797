// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { KeyedSerialQueue } from '../../src/server/store/keyedSerialQueue.js';

const tick = () => sleep(5);

describe('KeyedSerialQueue', () => {
  it("runs one key's tasks one at a time in arrival order, other keys' alongside", async () => {
    const turns = new KeyedSerialQueue();
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const task = (name: string) => async () => {
      running++;
      most = Math.max(most, running);
      log.push(`start ${name}`);
      await tick();
      log.push(`end ${name}`);
      running--;
      return name;
    };
    const a = [turns.run('a', task('a1')), turns.run('a', task('a2')), turns.run('a', task('a3'))];
    const b = turns.run('b', task('b1'));
    expect(await Promise.all([...a, b])).toEqual(['a1', 'a2', 'a3', 'b1']);
    const ofA = log.filter((l) => l.endsWith('a1') || l.endsWith('a2') || l.endsWith('a3'));
    expect(ofA).toEqual(['start a1', 'end a1', 'start a2', 'end a2', 'start a3', 'end a3']);
    // b ran beside a1, not after a3.
    expect(log.indexOf('start b1')).toBeLessThan(log.indexOf('end a1'));
    expect(most).toBe(2);
  });

  it('a failed task rejects its own caller only; the next one runs', async () => {
    const turns = new KeyedSerialQueue();
    const failed = turns.run('k', () => Promise.reject(new Error('boom')));
    const next = turns.run('k', async () => 'ran');
    await expect(failed).rejects.toThrow('boom');
    expect(await next).toBe('ran');
  });
});
