// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import type { MediaSessionSpec } from '../../src/media/mediaCore.js';
import { testLogger } from '../support/testLog.js';
import { DetachedMediaCore } from './detachedMedia.js';
import { startTestServer, type TestServer, type TestServerOptions } from './testServer.js';

/**
 * The create path at the media seam: a media core whose start a test holds back (slow) or never
 * lets finish (hung), and asks afterwards what it still runs.
 */
const AVATAR = AVATAR_CATALOGUE[0]!.avatarId;

interface Gate {
  /** Resolves when a start is being held; gives its session id. */
  entered: Promise<string>;
  release(): void;
}

function gatedMedia(hold: 'until-released' | 'forever'): { media: DetachedMediaCore; gate: Gate } {
  let entered!: (id: string) => void;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const gate: Gate = { entered: new Promise((r) => (entered = r)), release };
  const media = new DetachedMediaCore({
    beforeStart: async (spec: MediaSessionSpec) => {
      entered(spec.sessionId);
      if (hold === 'forever') await new Promise<never>(() => undefined);
      await released;
    },
  });
  return { media, gate };
}

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(media: DetachedMediaCore, opts: TestServerOptions = {}) {
  server = await startTestServer({ ...opts, start: { media } });
  return server;
}

function create(s: TestServer) {
  return s.call('POST', '/v1/sessions', { json: { avatar_id: AVATAR, mode: 'video' } });
}

async function sessionRow(s: TestServer, id: string) {
  return (await (await s.call('GET', `/v1/sessions/${id}`)).json()) as {
    status: string;
    end_reason: string | null;
  };
}

async function until(check: () => boolean, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('a DELETE that races the create', () => {
  it('leaves no avatar running: the create path stops the media it started', async () => {
    const { media, gate } = gatedMedia('until-released');
    const s = await start(media);
    const creating = create(s);
    const id = await gate.entered;
    expect((await s.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
    gate.release();
    const res = await creating;
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
      'media_unavailable',
    );
    expect(await sessionRow(s, id)).toMatchObject({ status: 'ended', end_reason: 'deleted' });
    await until(() => media.running().size === 0, 'the media to be stopped');
  });
});

describe('reconciliation', () => {
  it('stops media that the store does not list as live on this node', async () => {
    const media = new DetachedMediaCore();
    const s = await start(media, { limits: { reconcileIntervalMs: 100 } });
    // A session the manager knows nothing of (a leak) beside a real one.
    await media.start({ sessionId: 'ses_leaked00000000000000000000' } as MediaSessionSpec);
    const res = await create(s);
    expect(res.status).toBe(201);
    const { session_id } = (await res.json()) as { session_id: string };
    await until(() => !media.running().has('ses_leaked00000000000000000000'), 'the leak to end');
    expect([...media.running().keys()]).toEqual([session_id]);
    // A session ended behind the manager's back (another process) is stopped too.
    await s.store.endSession(session_id, 'deleted');
    await until(() => media.running().size === 0, 'the ended session to be stopped');
    expect(await sessionRow(s, session_id)).toMatchObject({ end_reason: 'deleted' });
  });
});

describe('reconciliation beside a slow teardown', () => {
  it('leaves alone the media of a session being ended (no false leak)', async () => {
    const lines: Record<string, unknown>[] = [];
    const media = new DetachedMediaCore({
      beforeClose: () => sleep(1_000),
    });
    server = await startTestServer({
      limits: { reconcileIntervalMs: 100 },
      start: { media, log: testLogger((l) => lines.push(l)) },
    });
    const res = await create(server);
    const { session_id } = (await res.json()) as { session_id: string };
    expect((await server.call('DELETE', `/v1/sessions/${session_id}`)).status).toBe(204);
    await until(() => media.running().size === 0, 'the teardown to finish');
    expect(lines.filter((l) => String(l.msg).startsWith('reconciliation'))).toEqual([]);
  });

  it('leaves alone media that closed while the round read the store (no false leak)', async () => {
    // A loaded machine's database: the store's answer comes only once the teardown is over,
    // after the round took its list of running media (a whole run met this once: the round then
    // stopped media that had closed already, and warned of a leak).
    const lines: Record<string, unknown>[] = [];
    const media = new DetachedMediaCore({ beforeClose: () => sleep(300) });
    server = await startTestServer({
      limits: { reconcileIntervalMs: 100 },
      start: { media, log: testLogger((l) => lines.push(l)) },
    });
    const store = server.store;
    const liveOnNode = store.liveSessionIdsOnNode.bind(store);
    let closed = 0;
    store.liveSessionIdsOnNode = async (node) => {
      while (media.running().size > 0) await sleep(20);
      return liveOnNode(node);
    };
    const res = await create(server);
    const { session_id } = (await res.json()) as { session_id: string };
    const close = media.running().get(session_id)!.close.bind(media.running().get(session_id));
    media.running().get(session_id)!.close = () => (closed++, close());
    expect((await server.call('DELETE', `/v1/sessions/${session_id}`)).status).toBe(204);
    await until(() => media.running().size === 0, 'the teardown to finish');
    await sleep(500); // rounds that waited on the store judge now
    expect(lines.filter((l) => String(l.msg).startsWith('reconciliation'))).toEqual([]);
    expect(closed, 'closed once').toBe(1);
  });
});

describe('a create whose media never comes up', () => {
  it('ends the session with error, frees the slot and answers 503 with the reason', async () => {
    const { media, gate } = gatedMedia('forever');
    const s = await start(media, {
      cap: 1,
      // The bound is the media's: generous, so that saving the session on a busy machine is within it.
      limits: { createStageTimeoutMs: 2_000, reconcileIntervalMs: 200 },
    });
    const res = await create(s);
    const id = await gate.entered;
    expect(res.status).toBe(503);
    const err = ((await res.json()) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe('media_unavailable');
    expect(err.message).toMatch(/starting the avatar took longer than 2 s/);
    expect(res.headers.get('x-service-concurrent-sessions')).toBe('0');
    expect(await sessionRow(s, id)).toMatchObject({ status: 'ended', end_reason: 'error' });
    // The hung start holds nothing: reconciliation stops it, and the slot is free again.
    await until(() => media.running().size === 0, 'the hung media to be stopped');
  });

  it('tears down media that comes up after the create gave up', async () => {
    const { media, gate } = gatedMedia('until-released');
    // The bound is the media's: generous, so that saving the session on a busy machine is
    // within it (it gave up before the media started, with 300 ms, beside two busy processes).
    const s = await start(media, { limits: { createStageTimeoutMs: 2_000 } });
    const res = await create(s);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
      /starting the avatar/,
    );
    expect(media.running().size).toBe(1);
    gate.release();
    await until(() => media.running().size === 0, 'the late media to be stopped');
  });
});

describe('a create whose media comes up just too late', () => {
  it('answers 503 only once that media is stopped, so a retry does not meet it in the room', async () => {
    const media = new DetachedMediaCore({
      // Past the 1 s bound, within the half-bound grace the create still waits.
      beforeStart: () => sleep(1_200),
    });
    const s = await start(media, { limits: { createStageTimeoutMs: 1_000 } });
    const res = await create(s);
    expect(res.status).toBe(503);
    expect(media.running().size).toBe(0);
  });
});

describe('driving calls sent while the session is being created', () => {
  it('wait for the creation instead of answering session_ended', async () => {
    const { media, gate } = gatedMedia('until-released');
    const s = await start(media);
    const creating = create(s);
    const id = await gate.entered;
    const parking = s.call('POST', `/v1/sessions/${id}/waiting_state`, {
      json: { waiting: true },
    });
    // The call is held, not answered, while the media starts.
    const early = await Promise.race([parking.then(() => 'answered'), sleep(300, 'held')]);
    expect(early).toBe('held');
    gate.release();
    const created = await creating;
    expect(created.status).toBe(201);
    const parked = await parking;
    expect(parked.status).toBe(200);
    expect(await parked.json()).toMatchObject({ session_id: id, status: 'waiting' });
    expect(await sessionRow(s, id)).toMatchObject({ status: 'waiting' });
  });
});
