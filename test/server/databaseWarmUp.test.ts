// SPDX-License-Identifier: GPL-3.0-or-later
import { afterAll, describe, expect, inject, it } from 'vitest';
import { openEmbeddedDatabase, type Database } from '../../src/server/store/database.js';
import { warmUp } from '../../src/server/store/warmUp.js';
import { copyTemplate } from './templateDatabase.js';

/**
 * The embedded database's warm-up (warmUp.ts): a create's statements run right after the start,
 * so that PGlite's WebAssembly is recompiled for them before the first burst of creates rather
 * than during it. It must keep nothing, and never make a request's statement wait for it.
 */

let db: Promise<Database> | undefined;
const opened = () => (db ??= openEmbeddedDatabase(copyTemplate(inject('dbTemplate'))));

afterAll(async () => {
  await (await db)?.close();
});

async function counts(d: Database): Promise<Record<string, number>> {
  const r = await d.query<Record<string, number>>(
    `SELECT (SELECT count(*)::int FROM api_keys) AS keys,
       (SELECT count(*)::int FROM sessions) AS sessions,
       (SELECT count(*)::int FROM room_claims) AS claims`,
  );
  return r.rows[0]!;
}

describe('the embedded database warm-up', () => {
  it("runs a create's statements, admitted then refused by the cap, and keeps nothing", async () => {
    const d = await opened();
    const before = await counts(d);
    // Each round checks that its first create was admitted and its second refused: a warm-up
    // whose statements no longer run as a create's would reject here.
    await expect(warmUp(d, { nodeId: 'node_a', rounds: 20 })).resolves.toMatchObject({
      rounds: 20,
    });
    expect(await counts(d)).toEqual(before);
  });

  it("lets a request's statement go ahead of the rounds still to run", async () => {
    const d = await opened();
    let warmed = false;
    const warming = warmUp(d, { nodeId: 'node_a', rounds: 200 }).then((r) => {
      warmed = true;
      return r;
    });
    // Taken after the warm-up's first round: it runs after that round, not after the 200.
    const key = await d.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys');
    expect(key.rows[0]!.n).toBeGreaterThanOrEqual(0);
    expect(warmed).toBe(false);
    const tx = await d.transaction(async (t) => (await t.query('SELECT 1 AS one')).rows);
    expect(tx).toEqual([{ one: 1 }]);
    expect(warmed).toBe(false);
    await expect(warming).resolves.toMatchObject({ rounds: 200 });
  });

  it('stops between rounds once told to', async () => {
    const d = await opened();
    let stopped = false;
    const warming = warmUp(d, { nodeId: 'node_a', rounds: 1_000, stop: () => stopped });
    await d.query('SELECT 1');
    stopped = true;
    const { rounds } = await warming;
    expect(rounds).toBeGreaterThanOrEqual(1);
    expect(rounds).toBeLessThan(1_000);
  });
});
