// SPDX-License-Identifier: GPL-3.0-or-later
// A node listens while its media processes start (real child processes): readiness says so until
// they are up, and a node whose processes cannot start says why, refuses sessions and tells its
// runner to stop.
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './testServer.js';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const readyz = async (s: TestServer) => {
  const r = await fetch(`${s.url}/readyz`);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};

describe('a node whose media processes are starting', () => {
  it('listens at once and is ready for sessions once its processes are', async () => {
    let settled = false;
    server = await startTestServer({
      config: { mediaProcesses: 1 },
      start: { media: undefined },
    });
    void server.media.then(() => (settled = true));
    const live = await fetch(`${server.url}/healthz`);
    expect(live.status).toBe(200);
    // A process loads its code and its avatars after the database opened: seconds, not a turn.
    const early = await readyz(server);
    if (!settled) {
      expect(early.status).toBe(503);
      expect(JSON.stringify(early.body)).toMatch(/media processes are starting/);
    }
    // A session created meanwhile waits for the processes (then the media goes on as usual: here
    // to a LiveKit URL where nothing listens, so it ends 503 after they are up, not before).
    const creating = !settled;
    let answeredAfterWorkers: boolean | undefined;
    const created = server
      .call('POST', '/v1/sessions', {
        json: { avatar_id: AVATAR_CATALOGUE[0]!.avatarId, mode: 'video' },
      })
      .then((r) => {
        answeredAfterWorkers = settled;
        return r;
      });
    await server.media;
    expect((await readyz(server)).status).toBe(200);
    const answer = await created;
    if (creating) expect(answeredAfterWorkers).toBe(true);
    expect(JSON.stringify(await answer.json())).not.toMatch(/failed to start/);
  }, 120_000);

  it('refuses sessions and reports the failure when they cannot start', async () => {
    server = await startTestServer({
      config: {
        mediaProcesses: 1,
        // A speech engine with no key: every process refuses to start.
        media: { tts: { defaultEngine: 'elevenlabs' } },
      },
      start: { media: undefined },
    });
    const failure = await server.failed;
    expect(failure.message).toMatch(/elevenlabs|ElevenLabs|api key/i);
    await expect(server.media).rejects.toThrow();
    const ready = await readyz(server);
    expect(ready.status).toBe(503);
    expect(JSON.stringify(ready.body)).toMatch(/failed to start/);
    const created = await server.call('POST', '/v1/sessions', {
      json: { avatar_id: AVATAR_CATALOGUE[0]!.avatarId, mode: 'video' },
    });
    expect(created.status).toBe(503);
    const answer = JSON.stringify(await created.json());
    expect(answer).toMatch(/media processes failed to start/);
    // Why they failed is the operator's to read in the log, not the API caller's.
    expect(answer).not.toMatch(/elevenlabs|api key/i);
  }, 120_000);
});
