// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { RoomServiceClient } from 'livekit-server-sdk';
import { afterAll, expect, it } from 'vitest';
import type { DevServer } from '../../../src/devserver/index.js';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import { describeWebRtc } from '../../support/network.js';
import type { TestServer } from '../../server/testServer.js';
import { startMediaStack } from './mediaStack.js';

describeWebRtc('a session whose room or LiveKit server goes away', (address) => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
  });

  async function setup(): Promise<{ livekit: DevServer; visage: TestServer; apiSecret: string }> {
    const stack = await startMediaStack(address, { cap: 1 });
    cleanup.push(() => stack.close());
    return stack;
  }

  async function create(visage: TestServer) {
    const res = await visage.call('POST', '/v1/sessions', {
      json: { avatar_id: AVATAR_CATALOGUE[2]!.avatarId, mode: 'video' },
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { session_id: string; room_name: string };
  }

  async function waitEnded(visage: TestServer, id: string, timeoutMs: number) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const s = (await (await visage.call('GET', `/v1/sessions/${id}`)).json()) as {
        status: string;
        end_reason: string;
      };
      if (s.status === 'ended') return s;
      if (Date.now() > until) throw new Error(`session still ${s.status} after ${timeoutMs} ms`);
      await sleep(100);
    }
  }

  it('ends with room_closed when the room is deleted, and frees the slot', async () => {
    const { livekit, visage, apiSecret } = await setup();
    const s = await create(visage);
    await new RoomServiceClient(livekit.httpUrl, 'devkey', apiSecret).deleteRoom(s.room_name);
    expect(await waitEnded(visage, s.session_id, 10_000)).toMatchObject({
      end_reason: 'room_closed',
    });
    const next = await create(visage);
    await visage.call('DELETE', `/v1/sessions/${next.session_id}`);
  }, 60_000);

  it('ends with error when the LiveKit server goes away, and never hangs', async () => {
    const { livekit, visage } = await setup();
    const s = await create(visage);
    await livekit.close();
    expect(await waitEnded(visage, s.session_id, 45_000)).toMatchObject({ end_reason: 'error' });
    // With no LiveKit server, a new session cannot start: 503, and no slot is held.
    const res = await visage.call('POST', '/v1/sessions', {
      json: { avatar_id: AVATAR_CATALOGUE[2]!.avatarId, mode: 'video' },
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
      'media_unavailable',
    );
    expect(res.headers.get('x-service-concurrent-sessions')).toBe('0');
  }, 90_000);
});
