// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { runKeysCommand } from '../../src/cli/keysCommand.js';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { keyAdmin } from '../../src/server/admin/keyAdmin.js';
import { DetachedMediaCore } from './detachedMedia.js';
import { startTestServer, type TestServer } from './testServer.js';

const AVATAR = AVATAR_CATALOGUE[0]!.avatarId;

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function liveSessions(s: TestServer, secret: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await s.call('POST', '/v1/sessions', {
      json: { avatar_id: AVATAR, mode: 'video' },
      auth: secret,
    });
    expect(res.status).toBe(201);
    ids.push(((await res.json()) as { session_id: string }).session_id);
  }
  return ids;
}

async function until(check: () => boolean, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('revoking a key', () => {
  it('through the running server (visage keys revoke) ends its sessions at once', async () => {
    const media = new DetachedMediaCore();
    const s = (server = await startTestServer({ start: { media } }));
    const doomed = await s.newKey();
    const ids = await liveSessions(s, doomed.secret, 2);
    const [bystander] = await liveSessions(s, s.secret, 1);
    const out: string[] = [];
    const code = await runKeysCommand(['revoke', doomed.id, '--data-dir', s.dataDir], (l) =>
      out.push(l),
    );
    expect(code).toBe(0);
    // Ended in the store and stopped in the media by the time the command returns.
    for (const id of ids) {
      expect(await s.store.getSession(doomed.id, id)).toMatchObject({
        status: 'ended',
        endReason: 'key_revoked',
      });
      expect(media.running().has(id)).toBe(false);
    }
    expect([...media.running().keys()]).toEqual([bystander]);
    expect(await s.store.countLiveForKey(doomed.id)).toBe(0);
  });

  it('directly on the database ends its sessions too; reconciliation stops their media', async () => {
    const media = new DetachedMediaCore();
    const s = (server = await startTestServer({
      start: { media },
      limits: { reconcileIntervalMs: 100 },
    }));
    const doomed = await s.newKey();
    const [id] = await liveSessions(s, doomed.secret, 1);
    await keyAdmin.revoke(s.store, doomed.id);
    expect(await s.store.getSession(doomed.id, id!)).toMatchObject({
      status: 'ended',
      endReason: 'key_revoked',
    });
    await until(() => media.running().size === 0, 'the revoked session to be stopped');
    // The record keeps the reason the revocation gave.
    expect((await s.store.getSession(doomed.id, id!))?.endReason).toBe('key_revoked');
  });
});
