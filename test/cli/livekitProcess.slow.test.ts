// SPDX-License-Identifier: GPL-3.0-or-later
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startLivekitProcess } from '../../src/cli/livekitProcess.js';
import { MEDIA_NICE } from '../../src/processPriority.js';
import { threadsOf } from '../support/procThreads.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.runIf(process.platform === 'linux')('the embedded LiveKit server in its process', () => {
  it("runs below the API process's priority, in its session, and leaves a terminal's Ctrl-C to it", async () => {
    const lines: string[] = [];
    const livekit = await startLivekitProcess({
      port: await freePort(),
      host: '127.0.0.1',
      keys: { devkey: 'a-secret-of-the-length-livekit-wants-0123' },
      command: ['bin/visage.js'],
      output: { write: (text: string) => lines.push(text) },
    });
    try {
      // While a burst's avatars start, the API's accept loop comes first (src/processPriority.ts).
      const api = threadsOf(process.pid).find((t) => t.tid === process.pid)!;
      const threads = threadsOf(livekit.pid);
      expect(threads.length).toBeGreaterThan(4);
      expect(threads.map((t) => t.nice)).toEqual(
        threads.map(() => Math.min(19, api.nice + MEDIA_NICE)),
      );
      expect(threads.map((t) => t.session)).toEqual(threads.map(() => api.session));

      // In the terminal's process group, it gets the Ctrl-C meant for `visage dev`, whose
      // shutdown ends the sessions first and then stops it: it ignores it.
      process.kill(livekit.pid, 'SIGINT');
      await sleep(1_000);
      await expect(livekit.memory()).resolves.toMatchObject({ rss: expect.any(Number) });
    } finally {
      await livekit.close();
    }
    expect(() => process.kill(livekit.pid, 0)).toThrow();
  }, 60_000);
});
