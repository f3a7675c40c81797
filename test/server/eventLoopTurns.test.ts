// SPDX-License-Identifier: GPL-3.0-or-later
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, inject, it } from 'vitest';
import {
  EventLoopTurns,
  FIRST_AHEAD_LIMIT,
  openEmbeddedDatabase,
} from '../../src/server/store/database.js';
import { copyTemplate } from './templateDatabase.js';

/**
 * The embedded database runs its statements in this thread, and PGlite's promises resolve at
 * once: without turns, a queue of statements runs in one go and every request waits behind it
 * (issue 34: /healthz took seconds during a burst of creates).
 */
describe('the embedded database and the event loop', () => {
  it('lets the event loop turn while a long queue of statements drains', async () => {
    const db = await openEmbeddedDatabase(copyTemplate(inject('dbTemplate')));
    try {
      let done = 0;
      const queue = Array.from({ length: 1000 }, (_, i) =>
        db.query<{ n: number }>('SELECT $1::int AS n', [i]).then((r) => {
          done++;
          return r.rows[0]!.n;
        }),
      );
      // A request arriving now is served while the queue drains, not after it.
      await nextTurn();
      expect(done).toBeLessThan(1000);
      expect(await Promise.all(queue)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    } finally {
      await db.close();
    }
  });

  it('keeps a transaction whole and in order while it yields', async () => {
    const db = await openEmbeddedDatabase(copyTemplate(inject('dbTemplate')));
    try {
      await db.exec('CREATE TEMP TABLE turns (n int)');
      let during: Promise<{ rows: { c: number }[] }> | undefined;
      const tx = db.transaction(async (t) => {
        for (let i = 0; i < 300; i++) {
          await t.query('INSERT INTO turns VALUES ($1)', [i]);
          // A statement sent while the transaction runs (and yields) runs after it, never inside.
          if (i === 10) during = db.query<{ c: number }>('SELECT count(*)::int AS c FROM turns');
        }
        return (await t.query<{ c: number }>('SELECT count(*)::int AS c FROM turns')).rows[0]!.c;
      });
      expect(await tx).toBe(300);
      expect((await during!).rows[0]!.c).toBe(300);
    } finally {
      await db.close();
    }
  });
});

describe('EventLoopTurns', () => {
  it('runs a single statement ahead of waiting transactions, after the one under way', async () => {
    // In a burst of creates, a key's lookup must not wait for every create queued before it.
    const order: string[] = [];
    const turns = new EventLoopTurns(10);
    const piece = (name: string) => async () => {
      order.push(name);
      await nextTurn();
    };
    const running = turns.take(piece('transaction 1'), { timed: false });
    const waiting = [2, 3].map((n) => turns.take(piece(`transaction ${n}`), { timed: false }));
    const lookup = turns.take(piece('lookup'), { first: true });
    await Promise.all([running, ...waiting, lookup]);
    expect(order).toEqual(['transaction 1', 'lookup', 'transaction 2', 'transaction 3']);
  });

  it('lets no more than FIRST_AHEAD_LIMIT single statements in a row go ahead of a transaction', async () => {
    // A flood of lookups (made-up secrets, each a statement) must not starve the creates.
    const order: string[] = [];
    const turns = new EventLoopTurns(60_000);
    const running = turns.take(async () => {
      order.push('running');
      await nextTurn();
    });
    const transaction = turns.take(async () => order.push('transaction'), { timed: false });
    const lookups = Array.from({ length: 3 * FIRST_AHEAD_LIMIT }, (_, i) =>
      turns.take(async () => order.push(`lookup ${i}`), { first: true }),
    );
    await Promise.all([running, transaction, ...lookups]);
    expect(order.indexOf('transaction')).toBe(1 + FIRST_AHEAD_LIMIT);
  });

  it("runs a transaction's statements without yielding until the transaction's share is spent", async () => {
    // A transaction waiting for a turn holds the one connection: every statement waits behind it.
    const statements = async (turns: EventLoopTurns) => {
      const order: string[] = [];
      setImmediate(() => order.push('the loop turned'));
      await turns.take(
        async () => {
          for (let i = 0; i < 3; i++) {
            await turns.inTransaction(async () => {
              const until = performance.now() + 2;
              while (performance.now() < until); // a statement of 2 ms
              order.push(`statement ${i}`);
            });
          }
        },
        { timed: false },
      );
      return order;
    };
    expect(await statements(new EventLoopTurns(1, 60_000))).toEqual([
      'statement 0',
      'statement 1',
      'statement 2',
    ]);
    const yielding = await statements(new EventLoopTurns(1, 1));
    expect(yielding.indexOf('the loop turned')).toBeLessThan(yielding.indexOf('statement 2'));
  });

  it('runs a piece sent by the caller of the last one at once, behind nothing', async () => {
    const turns = new EventLoopTurns(60_000);
    await turns.take(async () => undefined);
    const order: string[] = [];
    const transaction = turns.take(async () => order.push('transaction'), { timed: false });
    const statement = turns.take(async () => order.push('statement'), { first: true });
    await Promise.all([transaction, statement]);
    expect(order).toEqual(['transaction', 'statement']);
  });

  it('runs pieces one at a time in order, and yields to the loop once a slice is spent', async () => {
    const order: string[] = [];
    const turns = new EventLoopTurns(0); // every piece in a turn of its own
    const pieces = [1, 2, 3].map((n) =>
      turns.take(async () => {
        order.push(`piece ${n}`);
        await Promise.resolve();
        return n;
      }),
    );
    setImmediate(() => order.push('other work'));
    expect(await Promise.all(pieces)).toEqual([1, 2, 3]);
    expect(order.indexOf('other work')).toBeGreaterThan(-1);
    expect(order.indexOf('other work')).toBeLessThan(order.indexOf('piece 3'));
  });

  it('runs a piece that comes while the loop was idle at once, not after the rest of the turn', async () => {
    const turns = new EventLoopTurns(10);
    await turns.take(async () => undefined);
    await sleep(30); // longer than a slice, with nothing to run
    const order: string[] = [];
    setImmediate(() => order.push('the loop turned'));
    await turns.take(async () => order.push('piece'));
    expect(order).toEqual(['piece']);
  });

  it('runs pieces back to back within a slice, and a failed piece does not stop the next', async () => {
    const order: string[] = [];
    const turns = new EventLoopTurns(60_000);
    const failing = turns.take(() => Promise.reject(new Error('bad statement')));
    const throwing = turns.take(
      () => {
        throw new Error('thrown before its promise');
      },
      { timed: false },
    );
    const next = turns.take(async () => order.push('next'));
    setImmediate(() => order.push('other work'));
    await expect(failing).rejects.toThrow('bad statement');
    await expect(throwing).rejects.toThrow('thrown before its promise');
    await next;
    expect(order[0]).toBe('next');
  });
});
