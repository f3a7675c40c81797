// SPDX-License-Identifier: GPL-3.0-or-later
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CreatedSession } from '@visage-avatar/client/api';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { freshPostgresDatabase } from '../support/embeddedPostgres.js';
import { startTestServer, type TestServer } from './testServer.js';

/**
 * Signed atlas URLs on a cluster (issue 48): the signing secret is a row of the shared database,
 * made by whichever node needs it first, so a URL one node hands out opens the atlas on any other
 * node, and every node hands out the same URL for an avatar on the same day.
 */

const AVATAR = AVATAR_CATALOGUE[0]!.avatarId;
let nodes: TestServer[] = [];

beforeAll(async () => {
  const databaseUrl = await freshPostgresDatabase(inject('postgresUrl'));
  nodes = await Promise.all(
    [0, 1].map((i) =>
      startTestServer({ config: { databaseUrl, nodeId: `atlas-node-${i}`, maxSessions: 10 } }),
    ),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(nodes.map((n) => n.close()));
});

describe('signed atlas URLs on two nodes of one database', () => {
  it('both nodes make the secret at once and get the same one', async () => {
    const [a, b] = await Promise.all(nodes.map((n) => n.store.serverSecret('atlas-url-hmac')));
    expect(a!.byteLength).toBe(32);
    expect(Buffer.compare(a!, b!)).toBe(0);
  });

  it('a URL from one node opens the atlas on the other, which signs the same one', async () => {
    const [a, b] = nodes as [TestServer, TestServer];
    const res = await a.call('POST', '/v1/sessions', {
      json: { avatar_id: AVATAR, mode: 'client' },
    });
    expect(res.status).toBe(201);
    const session = (await res.json()) as CreatedSession;
    const fromA = new URL(session.atlas_url!);
    // Fetched from the other node, with no key.
    const atlas = await fetch(`${b.url}${fromA.pathname}${fromA.search}`);
    expect(atlas.status).toBe(200);
    expect(
      Buffer.from(await atlas.arrayBuffer())
        .subarray(0, 8)
        .toString('ascii'),
    ).toBe('VSGATLAS');
    // Asked of the other node (a session of the same key), the URL is the same.
    const got = (await (
      await b.call('GET', `/v1/sessions/${session.session_id}`, { auth: a.secret })
    ).json()) as CreatedSession;
    expect(new URL(got.atlas_url!).search).toBe(fromA.search);
    await a.call('DELETE', `/v1/sessions/${session.session_id}`);
  });
});
