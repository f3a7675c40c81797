// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { RoomServiceClient } from 'livekit-server-sdk';
import { afterAll, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import { describeWebRtc } from '../../support/network.js';
import type { TestServer } from '../../server/testServer.js';
import { startMediaStack, type MediaStack } from './mediaStack.js';

/**
 * The LiveKit server closes a room that stays empty (the avatar, an agent, does not count) after
 * its empty timeout. Here the embedded server's defaults are cut to 1.5 s instead of 300 s: a
 * session nobody joins must still live by its own idle timeout, and a room that really closes
 * ends the session `room_closed`, not `error`.
 */
describeWebRtc('room timeouts', (address) => {
  let stack: MediaStack;
  let rooms: RoomServiceClient;
  afterAll(() => stack?.close());

  async function setup() {
    stack = await startMediaStack(address, {
      cap: 3,
      rooms: { unjoinedRoomTimeoutMs: 1500, emptyRoomTimeoutMs: 1500 },
    });
    rooms = new RoomServiceClient(stack.livekit.httpUrl, stack.apiKey, stack.apiSecret);
  }

  /** A session of the stack's Visage server; a 503 media_unavailable is retried (mediaStack.ts). */
  async function create(extra: Record<string, unknown> = {}) {
    return stack.create(AVATAR_CATALOGUE[1]!.avatarId, extra);
  }

  async function session(visage: TestServer, id: string) {
    return (await (await visage.call('GET', `/v1/sessions/${id}`)).json()) as {
      status: string;
      end_reason: string | null;
    };
  }

  async function waitEnded(visage: TestServer, id: string, timeoutMs: number) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const s = await session(visage, id);
      if (s.status === 'ended') return s;
      if (Date.now() > until) throw new Error(`session still ${s.status} after ${timeoutMs} ms`);
      await sleep(100);
    }
  }

  it('keeps a session nobody joins until its own idle timeout, parked ones beyond', async () => {
    await setup();
    const idle = await create({ idle_timeout_seconds: 10 }); // outlives the checks below, even on a busy machine
    const parked = await create({ idle_timeout_seconds: 5 });
    const park = await stack.visage.call(
      'POST',
      `/v1/sessions/${parked.session_id}/waiting_state`,
      {
        json: { waiting: true },
      },
    );
    expect(park.status).toBe(200);
    // The room was configured to outlast the session's maximum length.
    const [info] = await rooms.listRooms([idle.room_name]);
    expect(info?.emptyTimeout).toBeGreaterThanOrEqual(3600);
    expect(info?.departureTimeout).toBeGreaterThanOrEqual(3600);

    // Well past the server's (shortened) default empty timeout, both still live.
    await sleep(4000);
    expect(await session(stack.visage, idle.session_id)).toMatchObject({ status: 'active' });
    expect(await session(stack.visage, parked.session_id)).toMatchObject({ status: 'waiting' });

    // The idle one ends by its idle timeout, and its room (Visage's own) goes with it.
    expect(await waitEnded(stack.visage, idle.session_id, 20_000)).toMatchObject({
      end_reason: 'idle_timeout',
    });
    await expect.poll(() => rooms.listRooms([idle.room_name]), { timeout: 10_000 }).toEqual([]);
    expect(await session(stack.visage, parked.session_id)).toMatchObject({ status: 'waiting' });
    await stack.visage.call('DELETE', `/v1/sessions/${parked.session_id}`);
  }, 90_000);

  it('ends a session room_closed when the server closes its empty room', async () => {
    const s = await create();
    // Someone shortens the room's empty timeout: the server closes it (ROOM_CLOSED).
    await rooms.createRoom({ name: s.room_name, emptyTimeout: 1, departureTimeout: 1 });
    expect(await waitEnded(stack.visage, s.session_id, 20_000)).toMatchObject({
      end_reason: 'room_closed',
    });
  }, 60_000);
});
