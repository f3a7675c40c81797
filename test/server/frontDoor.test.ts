// SPDX-License-Identifier: GPL-3.0-or-later
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { CreateLull } from '../../src/server/http/createLull.js';
import { readinessCheck } from '../../src/server/http/readiness.js';
import { startTestServer, type TestServer } from './testServer.js';

/**
 * The API's listener answers `/healthz` and the refusal of a create whose key is at its cap by
 * this node's count itself (src/server/http/frontDoor.ts), without the framework; everything else
 * goes through the hono app. A path with a query string goes the long way, so each answer of the
 * front door is compared here with the app's answer to the same request: the same status,
 * headers and body, byte for byte, but for the request id and the date.
 */

const AVATAR = AVATAR_CATALOGUE[0]!.avatarId;
// One server for the file (a start is seconds on a busy machine); each test makes its own keys.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());
afterEach(() => {
  vi.restoreAllMocks();
});

const create = (s: TestServer, secret: string, path = '/v1/sessions') =>
  s.call('POST', path, { json: { avatar_id: AVATAR, mode: 'video' }, auth: secret });

/** What a client sees of an answer, but for what differs on every request. */
async function seen(res: Response) {
  const headers = Object.fromEntries(
    [...res.headers].filter(([name]) => name !== 'date' && name !== 'x-request-id'),
  );
  const text = await res.text();
  const body = text === '' ? '' : (JSON.parse(text) as { error?: { request_id?: string } });
  const requestId = res.headers.get('x-request-id');
  if (typeof body === 'object' && body.error) {
    // The envelope names the request its header names.
    expect(body.error.request_id).toBe(requestId);
    body.error.request_id = 'req_…';
  }
  expect(requestId).toMatch(/^req_[0-9A-Za-z]+$/);
  return { status: res.status, headers, body };
}

describe('the front door', () => {
  it('answers /healthz (GET and HEAD) as the app does', async () => {
    const s = server;
    for (const method of ['GET', 'HEAD']) {
      const front = await seen(await s.call(method, '/healthz', { auth: null }));
      const app = await seen(await s.call(method, '/healthz?via=app', { auth: null }));
      expect(front).toEqual(app);
      expect(front.status).toBe(200);
    }
    expect(
      (await s.call('GET', '/healthz', { auth: null }).then((r) => r.json())) as object,
    ).toEqual({ status: 'ok', version: 'test', media: 'detached' });
  });

  it('refuses a create of a key at its cap as the app does, without a query', async () => {
    const s = server;
    const key = await s.newKey(2);
    for (let i = 0; i < 2; i++) expect((await create(s, key.secret)).status).toBe(201);
    // The first refusal counts in the database; the key is then at its cap by this node's count.
    expect((await create(s, key.secret)).status).toBe(429);
    const queries = [
      vi.spyOn(s.store, 'findActiveKeyBySecret'),
      vi.spyOn(s.store, 'getAvatar'),
      vi.spyOn(s.store, 'insertSessionWithinCaps'),
      vi.spyOn(s.store, 'countLiveForKey'),
    ];
    const front = await seen(await create(s, key.secret));
    const app = await seen(await create(s, key.secret, '/v1/sessions?via=app'));
    expect(front).toEqual(app);
    expect(front.status).toBe(429);
    expect(front.headers['x-service-concurrent-sessions']).toBe('2');
    expect(front.headers['retry-after']).toBeDefined();
    expect(queries.reduce((n, spy) => n + spy.mock.calls.length, 0)).toBe(0);
  });

  it('reads and drops the body of a refused create, so the connection carries the next request', async () => {
    const s = server;
    const key = await s.newKey(1);
    expect((await create(s, key.secret)).status).toBe(201);
    expect((await create(s, key.secret)).status).toBe(429);
    const oneConnection = new Agent({ connections: 1, pipelining: 1 });
    try {
      const body = JSON.stringify({ avatar_id: AVATAR, mode: 'video', pad: 'x'.repeat(40_000) });
      const send = (path: string, method: 'GET' | 'POST', auth?: string) =>
        request(`${s.url}${path}`, {
          method,
          dispatcher: oneConnection,
          headers: auth
            ? { authorization: `Bearer ${auth}`, 'content-type': 'application/json' }
            : {},
          body: method === 'POST' ? body : undefined,
        });
      const refused = await send('/v1/sessions', 'POST', key.secret);
      expect(refused.statusCode).toBe(429);
      await refused.body.dump();
      const next = await send('/v1/sessions', 'GET', key.secret);
      expect(next.statusCode).toBe(200);
      expect(((await next.body.json()) as { data: unknown[] }).data).toHaveLength(1);
    } finally {
      await oneConnection.close();
    }
  });

  it('lets a create through once the key is under its cap again', async () => {
    const s = server;
    const key = await s.newKey(1);
    const first = (await (await create(s, key.secret)).json()) as { session_id: string };
    expect((await create(s, key.secret)).status).toBe(429);
    expect((await create(s, key.secret)).status).toBe(429);
    const del = await s.call('DELETE', `/v1/sessions/${first.session_id}`, { auth: key.secret });
    expect(del.status).toBe(204);
    expect((await create(s, key.secret)).status).toBe(201);
  });
});

describe("the lull in creates (the node's own work after its start waits for one)", () => {
  it('counts every session create, answered or refused, and nothing else', async () => {
    const seenCreates = vi.spyOn(CreateLull.prototype, 'seen');
    await server.call('GET', '/healthz');
    await server.call('GET', '/v1/avatars', { auth: 'sk_not_a_key' });
    expect(seenCreates).not.toHaveBeenCalled();
    expect((await create(server, 'sk_not_a_key')).status).toBe(401);
    expect(seenCreates).toHaveBeenCalledTimes(1);
  });
});

describe('readiness (/readyz)', () => {
  it('is ready while the database answers, and says which check failed when it does not', async () => {
    const s = server;
    const ready = await s.call('GET', '/readyz', { auth: null });
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', version: 'test', media: 'detached' });
    // The database failing (as PostgreSQL does when it is down): 503, in the error envelope.
    vi.spyOn(s.store, 'ping').mockRejectedValue(new Error('connect ECONNREFUSED 10.0.0.9:5432'));
    const gone = await s.call('GET', '/readyz', { auth: null });
    expect(gone.status).toBe(503);
    expect(gone.headers.get('retry-after')).toBe('1');
    const { error } = (await gone.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('database_unavailable');
    // The probe needs no key: the driver's words (an address here) go to the log, not to it.
    expect(error.message).toBe('The database failed; retry shortly.');
    // Liveness is not readiness: /healthz still answers.
    expect((await s.call('GET', '/healthz', { auth: null })).status).toBe(200);
  });

  it('answers 503 when the database does not answer in time, and while the node drains', async () => {
    const stuck = readinessCheck({
      draining: () => false,
      ping: () => new Promise(() => undefined),
      onDatabaseError: () => undefined,
      databaseMs: 20,
    });
    await expect(stuck()).rejects.toMatchObject({
      code: 'database_unavailable',
      message: 'The database did not answer within 20 ms; retry shortly.',
    });
    const told: unknown[] = [];
    const failing = readinessCheck({
      draining: () => false,
      ping: () => Promise.reject(new Error('password authentication failed for user "visage"')),
      onDatabaseError: (err) => told.push(err),
    });
    await expect(failing()).rejects.toMatchObject({
      message: 'The database failed; retry shortly.',
    });
    expect(String(told[0])).toContain('password authentication failed');
    const draining = readinessCheck({
      draining: () => true,
      ping: () => Promise.resolve(),
      onDatabaseError: () => undefined,
    });
    await expect(draining()).rejects.toMatchObject({ code: 'media_unavailable', status: 503 });
    const fine = readinessCheck({
      draining: () => false,
      ping: () => Promise.resolve(),
      onDatabaseError: () => undefined,
    });
    await expect(fine()).resolves.toBeUndefined();
  });
});
