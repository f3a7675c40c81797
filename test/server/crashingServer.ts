// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Child process for the crash test: starts a server on the given data directory, creates a key
 * (cap 1) and a session, prints them as one JSON line, then waits to be killed with SIGKILL.
 */
import pino from 'pino';
import { DEFAULT_LIMITS } from '../../src/server/config.js';
import { keyAdmin } from '../../src/server/admin/keyAdmin.js';
import { startVisage } from '../../src/server/runtime.js';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { DetachedMediaCore } from './detachedMedia.js';
import { LIVEKIT_FOR_TESTS } from './testServer.js';

const dataDir = process.argv[2]!;
const server = await startVisage(
  {
    host: '127.0.0.1',
    port: 0,
    dataDir,
    nodeId: 'test-node',
    maxSessions: 10,
    allowPrivateUrls: false,
    limits: DEFAULT_LIMITS,
    livekit: LIVEKIT_FOR_TESTS,
    version: 'test',
  },
  { log: pino({ level: 'silent' }), media: new DetachedMediaCore() },
);
const { secret } = await keyAdmin.create(server.store, 'crash', 1);
const res = await fetch(`${server.url}/v1/sessions`, {
  method: 'POST',
  headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
  body: JSON.stringify({ avatar_id: AVATAR_CATALOGUE[0]!.avatarId, mode: 'video' }),
});
const { session_id } = (await res.json()) as { session_id: string };
process.stdout.write(`${JSON.stringify({ secret, sessionId: session_id })}\n`);
setInterval(() => undefined, 1_000);
