// SPDX-License-Identifier: GPL-3.0-or-later
import type { Room } from '@livekit/rtc-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AvatarSession, VisageCapacityError } from '@visage-avatar/livekit-plugin';
import { agentSession, sleep } from './agentHarness.js';
import { startTestServer } from '../server/testServer.js';
import { apiSession, MILO, startPluginHarness, type PluginHarness } from './pluginHarness.js';
import { SimulatedAvatarMedia } from './simulatedAvatar.js';

// The service answers 429 with Retry-After: 10, so the last two tests wait 10 s each: they wait
// side by side (each has its own key and room).
let h: PluginHarness;
beforeAll(async () => {
  h = await startPluginHarness();
});
afterAll(() => h?.close());

/** A key with a cap of one, its slot taken by a session created through the API. */
async function fullKey() {
  const key = await h.server.newKey(1);
  const res = await h.server.call('POST', '/v1/sessions', {
    json: { avatar_id: MILO, mode: 'video' },
    auth: key.secret,
  });
  expect(res.status).toBe(201);
  const { session_id } = (await res.json()) as { session_id: string };
  return { secret: key.secret, blocker: session_id };
}

/**
 * An avatar started on a full key, waiting for capacity at most `waitSeconds`: what it threw,
 * and how long that took.
 */
async function startOnFullKey(room: string, waitSeconds: number) {
  const { secret } = await fullKey();
  const avatar = new AvatarSession({
    avatarId: MILO,
    apiKey: secret,
    apiUrl: h.server.url,
    maxCapacityWaitSeconds: waitSeconds,
  });
  const sut = agentSession([]);
  const started = Date.now();
  const error = await avatar
    .start(sut.session, h.media.room(room) as unknown as Room)
    .catch((e: unknown) => e);
  const elapsed = Date.now() - started;
  await avatar.aclose();
  await sut.close();
  return { error, elapsed };
}

describe('429 at start', () => {
  it('raises VisageCapacityError stating the cap at once when no wait is allowed', async () => {
    const { error, elapsed } = await startOnFullKey('cap-now', 0);
    expect(elapsed).toBeLessThan(2_000);
    expect(error).toBeInstanceOf(VisageCapacityError);
    const cap = error as VisageCapacityError;
    expect(cap).toMatchObject({ code: 'concurrency_cap', cap: 1, active: 1, attempts: 1 });
    expect(cap.retryAfterSeconds).toBe(10);
    expect(cap.message).toMatch(/cap of 1 concurrent session \(1 live\)/);
  });

  it('reports platform_busy when the whole node is full, though the key is under its cap', async () => {
    const media = new SimulatedAvatarMedia();
    const busy = await startTestServer({ start: { media }, config: { maxSessions: 1 }, cap: 5 });
    const sut = agentSession([]);
    try {
      const res = await busy.call('POST', '/v1/sessions', {
        json: { avatar_id: MILO, mode: 'video' },
      });
      expect(res.status).toBe(201);
      const avatar = new AvatarSession({
        avatarId: MILO,
        apiKey: busy.secret,
        apiUrl: busy.url,
        maxCapacityWaitSeconds: 0,
      });
      const error = await avatar
        .start(sut.session, media.room('busy') as unknown as Room)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VisageCapacityError);
      expect((error as VisageCapacityError).code).toBe('platform_busy');
      expect((error as VisageCapacityError).message).toMatch(/platform_busy/);
      await avatar.aclose();
    } finally {
      await sut.close();
      await busy.close();
    }
  });

  it.concurrent(
    'is retried after Retry-After, then reported with the cap when the bound is spent',
    async ({ expect }) => {
      const { error, elapsed } = await startOnFullKey('cap-retried', 15);
      expect(error).toBeInstanceOf(VisageCapacityError);
      expect((error as VisageCapacityError).attempts).toBe(2);
      expect((error as VisageCapacityError).waitedSeconds).toBeGreaterThanOrEqual(10);
      expect((error as VisageCapacityError).message).toMatch(
        /cap of 1 concurrent session \(1 live\)/,
      );
      expect(elapsed).toBeGreaterThanOrEqual(10_000);
      // No third wait: that would pass the 15 s bound.
      expect(elapsed).toBeLessThan(15_000);
    },
    30_000,
  );

  it.concurrent(
    'succeeds on a retry once a slot frees up',
    async ({ expect }) => {
      const { secret, blocker } = await fullKey();
      const avatar = new AvatarSession({
        avatarId: MILO,
        apiKey: secret,
        apiUrl: h.server.url,
        maxCapacityWaitSeconds: 25,
      });
      const sut = agentSession([]);
      const starting = avatar.start(sut.session, h.media.room('cap-freed') as unknown as Room);
      await sleep(1_000);
      await h.server.call('DELETE', `/v1/sessions/${blocker}`, { auth: secret });
      const id = await starting;
      expect((await apiSession(h.server, id)).status).not.toBe('ended');
      await avatar.aclose();
      await sut.close();
    },
    30_000,
  );
});
