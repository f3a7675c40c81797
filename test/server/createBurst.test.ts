// SPDX-License-Identifier: GPL-3.0-or-later
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { keyAdmin } from '../../src/server/admin/keyAdmin.js';
import { startTestServer, type TestServer } from './testServer.js';

/**
 * A burst of creates against a key at its cap (a retry storm) is refused from memory: no query
 * per refusal, so the node stays responsive; the cap stays the database's, and what this node
 * does to the key (a DELETE, a new cap, a revocation) applies at once.
 */

const AVATAR = AVATAR_CATALOGUE[0]!.avatarId;
// One server for the file (a start is seconds on a busy machine); each test makes its own keys,
// and the few sessions the tests leave live stay far below the node's limit of 50.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());
afterEach(() => {
  vi.restoreAllMocks();
});

const create = (s: TestServer, secret: string) =>
  s.call('POST', '/v1/sessions', { json: { avatar_id: AVATAR, mode: 'video' }, auth: secret });

/** Counts the store's calls from now on. */
function storeCalls(s: TestServer) {
  const spies = [
    vi.spyOn(s.store, 'findActiveKeyBySecret'),
    vi.spyOn(s.store, 'getAvatar'),
    vi.spyOn(s.store, 'insertSessionWithinCaps'),
    vi.spyOn(s.store, 'countLiveForKey'),
  ];
  return () => spies.reduce((n, spy) => n + spy.mock.calls.length, 0);
}

describe('a burst of creates against a key at its cap', () => {
  it('is refused without a query, each refusal with the count and the cap', async () => {
    const s = server;
    const key = await s.newKey(3);
    for (let i = 0; i < 3; i++) expect((await create(s, key.secret)).status).toBe(201);
    // A refusal reads the count afresh (a count is trusted for a second; this machine may be
    // slow): the burst comes right behind it.
    expect((await create(s, key.secret)).status).toBe(429);
    const calls = storeCalls(s);
    const burst = await Promise.all(Array.from({ length: 60 }, () => create(s, key.secret)));
    for (const res of burst) {
      expect(res.status).toBe(429);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
        'concurrency_cap',
      );
      expect(res.headers.get('x-service-concurrent-sessions')).toBe('3');
      expect(res.headers.get('x-service-max-concurrent-sessions')).toBe('3');
      expect(res.headers.get('retry-after')).not.toBeNull();
    }
    // None, or the few of one create that refreshed a count the machine let grow old: not one
    // (or four) per request.
    expect(calls()).toBeLessThan(10);
    // Other keys are not held back by it.
    expect((await create(s, (await s.newKey()).secret)).status).toBe(201);
  });

  it('a parallel burst on a fresh key gives exactly the cap, all others 429 with the count', async () => {
    const s = server;
    const key = await s.newKey(3);
    const burst = await Promise.all(Array.from({ length: 60 }, () => create(s, key.secret)));
    expect(burst.filter((r) => r.status === 201)).toHaveLength(3);
    for (const res of burst.filter((r) => r.status !== 201)) {
      expect(res.status).toBe(429);
      expect(res.headers.get('x-service-concurrent-sessions')).toBe('3');
    }
    expect(await s.store.countLiveForKey(key.id)).toBe(3);
  });

  it("answers a fresh key's first wave in the listener: only the creates that fit reach the app", async () => {
    const s = server;
    const key = await s.newKey(3);
    // The key's lookup waits until the whole wave is in the listener, so none is judged before.
    let arrived!: () => void;
    const allArrived = new Promise<void>((resolve) => (arrived = resolve));
    // Each create that reaches the listener asks whether its secret's key is known.
    const seen = vi.spyOn(s.sessions, 'knowsCreateSecret');
    const lookup = s.store.findActiveKeyBySecret.bind(s.store);
    vi.spyOn(s.store, 'findActiveKeyBySecret').mockImplementation(async (secret) => {
      await allArrived;
      return lookup(secret);
    });
    const reached = vi.spyOn(s.sessions, 'create');
    const wave = Array.from({ length: 40 }, () => create(s, key.secret));
    await vi.waitFor(() => expect(seen.mock.calls.length).toBeGreaterThanOrEqual(40));
    arrived();
    const statuses = (await Promise.all(wave)).map((r) => r.status);
    expect(statuses.filter((st) => st === 201)).toHaveLength(3);
    expect(statuses.filter((st) => st === 429)).toHaveLength(37);
    expect(reached).toHaveBeenCalledTimes(3);
  });

  it('answers a burst with a bad secret or a bad body as the app does, one by one', async () => {
    const s = server;
    const key = await s.newKey();
    const unknown = await Promise.all(Array.from({ length: 20 }, () => create(s, 'sk_unknown')));
    for (const res of unknown) expect(res.status).toBe(401);
    const bad = await Promise.all(
      Array.from({ length: 20 }, () =>
        s.call('POST', '/v1/sessions', { json: { mode: 'video' }, auth: key.secret }),
      ),
    );
    for (const res of bad) expect(res.status).toBe(400);
    expect((await create(s, key.secret)).status).toBe(201);
  });

  it("refuses a fresh key's first wave while the creates that fit are still being saved", async () => {
    const s = server;
    const key = await s.newKey(3);
    // The database holds the creates that fit: the refusals must not wait for its count.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const insert = s.store.insertSessionWithinCaps.bind(s.store);
    const saving = vi
      .spyOn(s.store, 'insertSessionWithinCaps')
      .mockImplementation(async (...args) => {
        await held;
        return insert(...args);
      });
    const fitting = Array.from({ length: 3 }, () => create(s, key.secret));
    await vi.waitFor(() => expect(saving).toHaveBeenCalledTimes(3));
    const wave = await Promise.all(Array.from({ length: 30 }, () => create(s, key.secret)));
    for (const res of wave) {
      expect(res.status).toBe(429);
      expect(res.headers.get('x-service-concurrent-sessions')).toBe('3');
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('concurrency_cap');
      expect(error.message).toMatch(/3 of them being created now/);
    }
    expect(saving).toHaveBeenCalledTimes(3);
    release();
    for (const res of await Promise.all(fitting)) expect(res.status).toBe(201);
    // The creates under way had held the slots; once saved, the sessions do, and the refusal
    // says so (refusals are kept by their count: not the one given while they were saved).
    const after = await create(s, key.secret);
    expect(after.status).toBe(429);
    expect(((await after.json()) as { error: { message: string } }).error.message).toBe(
      'This key is at its cap of 3 concurrent sessions; end one or wait.',
    );
  });

  it("gives each key's refusals that key's own count and cap", async () => {
    const s = server;
    const one = await s.newKey(1);
    const two = await s.newKey(2);
    expect((await create(s, one.secret)).status).toBe(201);
    for (let i = 0; i < 2; i++) expect((await create(s, two.secret)).status).toBe(201);
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) => create(s, i % 2 ? two.secret : one.secret)),
    );
    for (const [i, res] of burst.entries()) {
      const cap = i % 2 ? '2' : '1';
      expect(res.status).toBe(429);
      expect(res.headers.get('x-service-max-concurrent-sessions')).toBe(cap);
      expect(res.headers.get('x-service-concurrent-sessions')).toBe(cap);
      const { error } = (await res.json()) as { error: { message: string } };
      expect(error.message).toMatch(new RegExp(`at its cap of ${cap} concurrent`));
    }
  });

  it('frees the slot of a create that failed, at once', async () => {
    const s = server;
    const key = await s.newKey(1);
    const missing = await s.call('POST', '/v1/sessions', {
      json: { avatar_id: 'avt_nosuchavatar', mode: 'video' },
      auth: key.secret,
    });
    expect(missing.status).toBe(404);
    expect((await create(s, key.secret)).status).toBe(201);
  });

  it('lets the next create in the moment a DELETE on this node answered', async () => {
    const s = server;
    const key = await s.newKey(1);
    const first = (await (await create(s, key.secret)).json()) as { session_id: string };
    expect((await create(s, key.secret)).status).toBe(429);
    const del = await s.call('DELETE', `/v1/sessions/${first.session_id}`, { auth: key.secret });
    expect(del.status).toBe(204);
    expect((await create(s, key.secret)).status).toBe(201);
  });

  it('applies a raised cap and a revocation made through this node at once', async () => {
    const s = server;
    const key = await s.newKey(1);
    expect((await create(s, key.secret)).status).toBe(201);
    expect((await create(s, key.secret)).status).toBe(429);
    await keyAdmin.setCap(s.store, key.id, 2);
    expect((await create(s, key.secret)).status).toBe(201);
    expect((await create(s, key.secret)).status).toBe(429);
    await keyAdmin.revoke(s.store, key.id, (ids) => s.sessions.stopEnded(ids, 'key_revoked'));
    const revoked = await create(s, key.secret);
    expect(revoked.status).toBe(401);
  });
});
