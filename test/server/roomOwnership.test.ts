// SPDX-License-Identifier: GPL-3.0-or-later
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { startTestServer, type TestServer } from './testServer.js';

const AVATAR = AVATAR_CATALOGUE[0]!.avatarId;

interface Created {
  session_id: string;
  room_name: string;
  participant_token: string;
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ cap: 20 });
});
afterAll(() => server?.close());

function create(secret: string, extra: Record<string, unknown> = {}) {
  return server.call('POST', '/v1/sessions', {
    json: { avatar_id: AVATAR, mode: 'video', ...extra },
    auth: secret,
  });
}

describe('rooms belong to keys', () => {
  it("refuses a room that hosts another key's live session, without saying whose", async () => {
    const a = await server.newKey();
    const b = await server.newKey();
    const first = await create(a.secret, { room_name: 'ownership-room-1' });
    expect(first.status).toBe(201);
    const owned = (await first.json()) as Created;

    const res = await create(b.secret, { room_name: 'ownership-room-1' });
    expect(res.status).toBe(409);
    const body = (await res.json()) as { error: { type: string; code: string; message: string } };
    expect(body.error).toMatchObject({ type: 'conflict', code: 'room_not_available' });
    for (const aboutA of [a.id, a.secret, owned.session_id]) {
      expect(body.error.message).not.toContain(aboutA);
    }
    // B holds no slot for the refused create.
    expect(res.headers.get('x-service-concurrent-sessions')).toBe('0');

    // The owner may add a second session to its own room.
    const second = await create(a.secret, { room_name: 'ownership-room-1' });
    expect(second.status).toBe(201);
    const secondId = ((await second.json()) as Created).session_id;

    // Once none of A's sessions in it is live, the room is free for B.
    await server.call('DELETE', `/v1/sessions/${owned.session_id}`, { auth: a.secret });
    expect((await create(b.secret, { room_name: 'ownership-room-1' })).status).toBe(409);
    await server.call('DELETE', `/v1/sessions/${secondId}`, { auth: a.secret });
    const taken = await create(b.secret, { room_name: 'ownership-room-1' });
    expect(taken.status).toBe(201);
    // And now A is the outsider.
    expect((await create(a.secret, { room_name: 'ownership-room-1' })).status).toBe(409);
  });

  it('gives a room to one key only when two keys create into it at the same moment', async () => {
    const keys = [await server.newKey(), await server.newKey()];
    const attempts = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        create(keys[i % 2]!.secret, { room_name: 'ownership-race' }).then(async (res) => ({
          status: res.status,
          key: i % 2,
          body: (await res.json()) as Created & { error?: { code: string } },
        })),
      ),
    );
    const winners = new Set(attempts.filter((r) => r.status === 201).map((r) => r.key));
    expect(winners.size).toBe(1);
    const loser = 1 - [...winners][0]!;
    const lost = attempts.filter((r) => r.key === loser);
    expect(lost.map((r) => [r.status, r.body.error?.code])).toEqual(
      lost.map(() => [409, 'room_not_available']),
    );
  });

  it('names its own rooms unguessably: random, not derived from the session id', async () => {
    const k = await server.newKey();
    const names = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const res = await create(k.secret);
      expect(res.status).toBe(201);
      const s = (await res.json()) as Created;
      expect(s.room_name).toMatch(/^visage_[0-9A-Za-z]{24}$/);
      const idBody = s.session_id.slice('ses_'.length);
      expect(s.room_name).not.toContain(idBody);
      expect(s.room_name).not.toContain(idBody.slice(0, 8));
      names.add(s.room_name);
      await server.call('DELETE', `/v1/sessions/${s.session_id}`, { auth: k.secret });
    }
    expect(names.size).toBe(3);
  });
});
