// SPDX-License-Identifier: GPL-3.0-or-later
import { log } from '@livekit/agents';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { VisageClient } from '@visage-avatar/client';
import { markerFrame } from '../../packages/livekit-plugin/src/markerFrame.js';
import { SessionCommandQueue } from '../../packages/livekit-plugin/src/sessionCommandQueue.js';
import { VisageSpeechOutput } from '../../packages/livekit-plugin/src/visageSpeechOutput.js';
import { startTestServer, type TestServer } from '../server/testServer.js';
import { MILO } from './pluginHarness.js';
import './agentHarness.js';

// The plugin's log lines, to check what it says about replies nobody hears (and how often). The
// plugin's logger is a child of the agents framework's (`pluginLog()` asks for it on each call), so
// the framework logger's `child` hands the plugin one that writes here. No module mock: in a run
// without isolation (test:fast) the plugin's modules may already be loaded by an earlier file.
const logged: { level: number; msg: string }[] = [];
const capture = pino(
  { level: 'debug' },
  { write: (line: string) => logged.push(JSON.parse(line)) },
);
const frameworkChild = log().child.bind(log());
const childSpy = vi
  .spyOn(log(), 'child')
  .mockImplementation((bindings, options) =>
    bindings.plugin === 'visage'
      ? (capture.child(bindings) as unknown as ReturnType<typeof frameworkChild>)
      : frameworkChild(bindings, options),
  );
afterAll(() => childSpy.mockRestore());

let server: TestServer;
let client: VisageClient;
beforeAll(async () => {
  server = await startTestServer({ cap: 5 });
  client = new VisageClient({ apiKey: server.secret, baseUrl: server.url, maxRetries: 0 });
});
afterAll(() => server?.close());

describe('text-mode speech output after the service ended the session', () => {
  it('reports each later reply as interrupted with nothing heard, not as spoken', async () => {
    const created = await client.sessions.create({ avatar_id: MILO, mode: 'video' });
    const queue = new SessionCommandQueue(client, created.session_id, { timeoutMs: 5_000 });
    const output = new VisageSpeechOutput(queue, {
      playbackTimeoutMs: 10_000,
      interruptGraceMs: 750,
    });
    // Someone else ends the session (an outside DELETE, the idle timeout, a revoked key).
    await client.sessions.delete(created.session_id);

    for (const reply of [['Hello there.', 'How can I help you today?'], ['Anyone listening?']]) {
      for (const sentence of reply) await output.captureFrame(markerFrame(sentence));
      output.flush();
      const event = await output.waitForPlayout();
      expect(event).toMatchObject({ interrupted: true, synchronizedTranscript: '' });
      expect(event.playbackPosition).toBe(0);
    }
    expect(queue.ended).toBe(true);
    // Why is said once, however many replies are lost.
    const notPlayed = logged.filter((l) => l.msg.includes('replies are not played'));
    expect(notPlayed).toHaveLength(1);
    expect(notPlayed[0]!.level).toBe(40);
    expect(logged.filter((l) => l.msg.includes('will not speak any more'))).toHaveLength(1);
  });
});
