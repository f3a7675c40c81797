// SPDX-License-Identifier: GPL-3.0-or-later
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { lowerProcessPriority, MEDIA_NICE } from '../src/processPriority.js';
import { threadsOf } from './support/procThreads.js';

// A child with a worker thread, started before its priority is lowered, and one after.
const CHILD = `
const { Worker } = require('node:worker_threads');
new Worker('setInterval(() => {}, 1000)', { eval: true }).on('online', () => {
  console.log('ready');
  process.stdin.once('data', () => {
    new Worker('setInterval(() => {}, 1000)', { eval: true }).on('online', () => console.log('again'));
  });
});
`;

describe.runIf(process.platform === 'linux')('lowerProcessPriority', () => {
  it('sets every thread of a child, and the threads it starts later inherit it', async () => {
    const ours = threadsOf(process.pid).find((t) => t.tid === process.pid)!.nice;
    const child = spawn(process.execPath, ['-e', CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const lines = child.stdout.setEncoding('utf8');
      await once(lines, 'data');
      const before = threadsOf(child.pid!);
      expect(before.length).toBeGreaterThan(2);
      expect(before.map((t) => t.nice)).toEqual(before.map(() => ours));

      expect(lowerProcessPriority(child.pid!, MEDIA_NICE)).toBe(before.length);
      expect(MEDIA_NICE).toBeGreaterThan(0);
      const lowered = threadsOf(child.pid!);
      const below = Math.min(19, ours + MEDIA_NICE);
      expect(lowered.map((t) => t.nice)).toEqual(lowered.map(() => below));

      child.stdin.write('\n');
      await once(lines, 'data');
      const later = threadsOf(child.pid!);
      expect(later.length).toBeGreaterThan(lowered.length);
      expect(later.map((t) => t.nice)).toEqual(later.map(() => below));
      // This process is untouched.
      expect(threadsOf(process.pid).find((t) => t.tid === process.pid)!.nice).toBe(ours);
    } finally {
      child.kill();
    }
  });

  it('never throws for a process that is gone', () => {
    expect(lowerProcessPriority(2 ** 22 + 12345, MEDIA_NICE)).toBe(0);
  });
});
