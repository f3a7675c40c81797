// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VisageClient } from '@visage-avatar/client';
import { createSessionWithRetry } from '../../packages/livekit-plugin/src/sessionStarter.js';
import { DetachedMediaCore } from '../server/detachedMedia.js';
import { startTestServer, type TestServer } from '../server/testServer.js';
import { MILO } from './pluginHarness.js';
import './agentHarness.js';

// The service takes 1.5 s to start each avatar: longer than the request timeout below.
let server: TestServer;
beforeAll(async () => {
  const media = new DetachedMediaCore({
    beforeStart: () => sleep(1_500),
  });
  server = await startTestServer({ cap: 5, start: { media } });
});
afterAll(() => server?.close());

describe('a create slower than the request timeout', () => {
  it('is waited for, not repeated: one session, whose answer the plugin gets', async () => {
    // As the plugin builds its client: the framework's request timeout for every call.
    const client = new VisageClient({
      apiKey: server.secret,
      baseUrl: server.url,
      maxRetries: 0,
      timeoutMs: 300,
    });
    const created = await createSessionWithRetry(
      client,
      { avatar_id: MILO, mode: 'video', room_name: 'slow-create', agent_identity: 'avatar-a' },
      {
        maxCapacityWaitSeconds: 0,
        connOptions: { timeoutMs: 300, maxRetry: 3, retryIntervalMs: 100 },
      },
    );
    const list = await client.sessions.list();
    const live = list.data.filter((s) => s.status !== 'ended');
    expect(live.map((s) => s.session_id)).toEqual([created.session_id]);
    await client.sessions.delete(created.session_id);
  });
});
