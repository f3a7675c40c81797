// SPDX-License-Identifier: GPL-3.0-or-later
// A node's heartbeat is never queued behind its requests: with every connection of the request
// pool held by transactions waiting on a locked row (300 creates at once on one key wait on the
// key's row), the heartbeat still goes through. Before, it waited for a pooled connection, and on
// a loaded machine went unsent for over 10 s: the other nodes declared the node lost.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ClusterStore } from '../../src/server/store/clusterStore.js';
import type { Database } from '../../src/server/store/database.js';
import { openPostgresDatabase } from '../../src/server/store/postgresDatabase.js';
import { freshPostgresDatabase } from '../support/embeddedPostgres.js';

const serverUrl = inject('postgresUrl');

describe.skipIf(!serverUrl)('the cluster heartbeat on PostgreSQL', () => {
  let url: string;
  let db: Database;
  let locker: pg.Client;

  beforeAll(async () => {
    url = await freshPostgresDatabase(serverUrl!);
    db = await openPostgresDatabase(url);
    locker = new pg.Client({ connectionString: url });
    await locker.connect();
  });

  afterAll(async () => {
    await locker?.end();
    await db?.close();
  });

  it('goes through while every request connection waits on a locked row', async () => {
    const cluster = new ClusterStore(db);
    const node = { id: 'node-x', instance: 'i1', capacity: 4, mediaReady: true };
    expect(await cluster.register(node, 10_000)).toBe(true);
    await db.query(`INSERT INTO cluster_nodes (id, instance, capacity, running, draining,
      media_ready, started_at, heartbeat_at) VALUES ('held', 'i0', 1, 0, false, true, now(), now())`);
    // Another session holds a row; twenty transactions of this node wait for it (the pool has 10).
    await locker.query('BEGIN');
    await locker.query(`SELECT 1 FROM cluster_nodes WHERE id = 'held' FOR UPDATE`);
    let waitingDone = 0;
    const waiting = Array.from({ length: 20 }, () =>
      db
        .transaction((tx) => tx.query(`SELECT 1 FROM cluster_nodes WHERE id = 'held' FOR UPDATE`))
        .then(() => waitingDone++),
    );
    // The pool is taken: a plain query of this node waits too (checked, so the case is real).
    let plainDone = false;
    const plain = db.query('SELECT 1').then(() => (plainDone = true));
    const beat = await cluster.heartbeat(node.id, node.instance);
    expect(beat).toBe(true);
    expect(waitingDone).toBe(0);
    expect(plainDone).toBe(false);
    await locker.query('COMMIT');
    await Promise.all([...waiting, plain]);
    expect(waitingDone).toBe(20);
  });
});
