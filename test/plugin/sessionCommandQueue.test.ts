// SPDX-License-Identifier: GPL-3.0-or-later
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VisageClient } from '@visage-avatar/client';
import { SessionCommandQueue } from '../../packages/livekit-plugin/src/sessionCommandQueue.js';
import type { MediaCore, MediaSession } from '../../src/media/mediaCore.js';
import { startTestServer, type TestServer } from '../server/testServer.js';
import { MILO } from './pluginHarness.js';
import './agentHarness.js';

/** What reached the media of the session, in order. */
const calls: string[] = [];
const recordingMedia: MediaCore = {
  kind: 'recording',
  async start(): Promise<MediaSession> {
    return {
      speaking: false,
      speak: (item) => void calls.push(`speak:${item.text}`),
      playAudio: () => undefined,
      interrupt: () => {
        calls.push('interrupt');
        return { interrupted: false, droppedUtterances: 0 };
      },
      setWaiting: (w) => void calls.push(`waiting:${w}`),
      close: async () => void calls.push('close'),
    };
  },
  running: () => new Map(),
  async close() {},
};

let server: TestServer;
let client: VisageClient;
beforeAll(async () => {
  server = await startTestServer({ start: { media: recordingMedia }, cap: 20 });
  client = new VisageClient({ apiKey: server.secret, baseUrl: server.url, maxRetries: 0 });
});
afterAll(() => server?.close());

async function newQueue() {
  const created = await client.sessions.create({ avatar_id: MILO, mode: 'video' });
  calls.length = 0;
  return new SessionCommandQueue(client, created.session_id, { timeoutMs: 5_000 });
}

describe('SessionCommandQueue', () => {
  it('sends requests one at a time in the order they were made', async () => {
    const queue = await newQueue();
    const results = await Promise.all([
      queue.speak('one'),
      queue.setWaiting(true),
      queue.speak('two'),
      queue.speak('three'),
    ]);
    await queue.whenIdle();
    // A speak on a parked session resumes it first, on the same queue. (The service stops
    // whatever plays when it parks a session: the `interrupt` before `waiting:true`.)
    expect(calls).toEqual([
      'speak:one',
      'interrupt',
      'waiting:true',
      'waiting:false',
      'speak:two',
      'speak:three',
    ]);
    expect(results[0]?.utterance_id).toMatch(/^utt_/);
    expect(queue.parked).toBe(false);
  });

  it('an interrupt drops the queued speaks and goes right after the one on the wire', async () => {
    const queue = await newQueue();
    const first = queue.speak('on the wire');
    const dropped = [queue.speak('queued 1'), queue.speak('queued 2')];
    const interrupted = queue.interrupt();
    const after = queue.speak('after the interrupt');
    expect(await Promise.all(dropped)).toEqual([undefined, undefined]);
    expect((await first)?.utterance_id).toMatch(/^utt_/);
    expect(await interrupted).toMatchObject({ interrupted: false, dropped_utterances: 0 });
    expect((await after)?.utterance_id).toMatch(/^utt_/);
    expect(calls).toEqual(['speak:on the wire', 'interrupt', 'speak:after the interrupt']);
  });

  it('setWaiting is a no-op when that is already the queued state', async () => {
    const queue = await newQueue();
    await Promise.all([queue.setWaiting(true), queue.setWaiting(true), queue.setWaiting(false)]);
    await queue.setWaiting(false);
    expect(calls).toEqual(['interrupt', 'waiting:true', 'waiting:false']);
  });

  it('a session ended on the service side turns later calls into no-ops', async () => {
    const queue = await newQueue();
    await client.sessions.delete(queue.sessionId);
    expect(await queue.speak('too late')).toBeUndefined();
    expect(queue.ended).toBe(true);
    expect(await queue.interrupt()).toBeUndefined();
    expect(calls).toEqual(['close']);
  });

  it('a failed request rejects its own promise and the queue goes on', async () => {
    const queue = await newQueue();
    const tooLong = queue.speak('x'.repeat(10_000));
    const next = queue.speak('fine');
    await expect(tooLong).rejects.toMatchObject({ status: 400 });
    expect((await next)?.utterance_id).toMatch(/^utt_/);
    expect(calls).toEqual(['speak:fine']);
  });
});
