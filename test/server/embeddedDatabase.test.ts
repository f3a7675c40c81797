// SPDX-License-Identifier: GPL-3.0-or-later
import { readdirSync } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { openEmbeddedDatabase, type Database } from '../../src/server/store/database.js';
import { FIRST_AHEAD_LIMIT, StatementQueue } from '../../src/server/store/statementQueue.js';
import { copyTemplate } from './templateDatabase.js';

/** One database for the tests that only need one (each makes its own temporary tables). */
let shared: Promise<Database> | undefined;

async function withDatabase(test: (db: Database) => Promise<void>): Promise<void> {
  shared ??= openEmbeddedDatabase(copyTemplate(inject('dbTemplate')));
  await test(await shared);
}

afterAll(async () => {
  await (await shared)?.close();
});

/**
 * PGlite runs each statement synchronously in the thread that holds it: the embedded database
 * runs it on a thread of its own, so that requests and `/healthz` do not wait behind its
 * statements (issues 34 and 47: a burst's creates held the API's event loop for seconds).
 */
describe('the embedded database on its own thread', () => {
  it('leaves the event loop free while a long statement runs', async () => {
    await withDatabase(async (db) => {
      let ticks = 0;
      const timer = setInterval(() => ticks++, 5);
      try {
        // About a second of the database's thread on a quiet machine; the API's thread ticks.
        const long = db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM generate_series(1, 2000000) AS s(i) WHERE i % 7 = 0',
        );
        const ticksBefore = ticks;
        const { rows } = await long;
        expect(rows[0]!.n).toBe(285714);
        expect(ticks - ticksBefore).toBeGreaterThanOrEqual(3);
      } finally {
        clearInterval(timer);
      }
    });
  });

  it('keeps a transaction whole: a statement sent while it runs runs after it', async () => {
    await withDatabase(async (db) => {
      await db.exec('DROP TABLE IF EXISTS turns; CREATE TEMP TABLE turns (n int)');
      let during: Promise<{ rows: { c: number }[] }> | undefined;
      const tx = db.transaction(async (t) => {
        for (let i = 0; i < 300; i++) {
          await t.query('INSERT INTO turns VALUES ($1)', [i]);
          if (i === 10) during = db.query<{ c: number }>('SELECT count(*)::int AS c FROM turns');
        }
        return (await t.query<{ c: number }>('SELECT count(*)::int AS c FROM turns')).rows[0]!.c;
      });
      expect(await tx).toBe(300);
      expect((await during!).rows[0]!.c).toBe(300);
    });
  });

  it('rolls back a transaction whose statement fails, gives its caller the error, and goes on', async () => {
    await withDatabase(async (db) => {
      await db.exec('DROP TABLE IF EXISTS t; CREATE TEMP TABLE t (n int PRIMARY KEY)');
      const failed = db.transaction(async (tx) => {
        await tx.query('INSERT INTO t VALUES (1)');
        await tx.query('INSERT INTO t VALUES (1)'); // a unique violation
      });
      await expect(failed).rejects.toMatchObject({ code: '23505' });
      // A statement queued behind the failed transaction runs, outside any transaction.
      expect((await db.query<{ c: number }>('SELECT count(*)::int AS c FROM t')).rows).toEqual([
        { c: 0 },
      ]);
      const thrown = db.transaction(async (tx) => {
        await tx.query('INSERT INTO t VALUES (2)');
        throw new Error('the caller gave up');
      });
      await expect(thrown).rejects.toThrow('the caller gave up');
      await db.transaction(async (tx) => tx.query('INSERT INTO t VALUES (3)'));
      expect((await db.query<{ n: number }>('SELECT n FROM t')).rows).toEqual([{ n: 3 }]);
    });
  });

  it('gives the caller a failed COMMIT, and goes on', async () => {
    await withDatabase(async (db) => {
      await db.exec(
        'DROP TABLE IF EXISTS d; CREATE TEMP TABLE d (n int CONSTRAINT d_n UNIQUE DEFERRABLE INITIALLY DEFERRED)',
      );
      const committed = db.transaction(async (tx) => {
        await tx.query('INSERT INTO d VALUES (1), (1)'); // checked only at COMMIT
        return 'inserted';
      });
      await expect(committed).rejects.toMatchObject({ code: '23505', constraint: 'd_n' });
      expect((await db.query<{ c: number }>('SELECT count(*)::int AS c FROM d')).rows).toEqual([
        { c: 0 },
      ]);
    });
  });

  it("answers a transaction's statements larger than its channel, and a long one without holding the loop", async () => {
    await withDatabase(async (db) => {
      let ticks = 0;
      const timer = setInterval(() => ticks++, 5);
      try {
        const [big, n] = await db.transaction(async (tx) => {
          // 4 MB of text: over the 1 MiB channel, so it comes back as a message.
          const r = await tx.query<{ s: string }>("SELECT repeat('x', 4000000) AS s");
          const ticksBefore = ticks;
          const long = await tx.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM generate_series(1, 2000000) AS s(i) WHERE i % 7 = 0',
          );
          // Past its sleep budget the API's thread waits for the answer without blocking.
          expect(ticks - ticksBefore).toBeGreaterThanOrEqual(3);
          return [r.rows[0]!.s.length, long.rows[0]!.n];
        });
        expect(big).toBe(4000000);
        expect(n).toBe(285714);
        expect((await db.query<{ a: number }>('SELECT 1 AS a')).rows).toEqual([{ a: 1 }]);
      } finally {
        clearInterval(timer);
      }
    });
  });

  it("keeps a PostgreSQL error's code and fields across the thread", async () => {
    await withDatabase(async (db) => {
      await db.exec('DROP TABLE IF EXISTS u; CREATE TEMP TABLE u (k text CONSTRAINT u_k UNIQUE)');
      await db.query('INSERT INTO u VALUES ($1)', ['a']);
      const err = await db.query('INSERT INTO u VALUES ($1)', ['a']).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(err).toMatchObject({ code: '23505', constraint: 'u_k', table: 'u' });
      expect((err as Error).message).toMatch(/duplicate key/);
      await expect(db.exec('SELEKT 1')).rejects.toMatchObject({ code: '42601' });
    });
  });

  it('gives rows back as the store reads them: Dates, bytea as Uint8Array, JSON', async () => {
    await withDatabase(async (db) => {
      const pooled = Buffer.from('xxhello bytesxx').subarray(2, 13); // a view into a larger buffer
      const at = new Date('2026-12-01T03:00:00.123Z');
      const { rows } = await db.query<{ b: Uint8Array; at: Date; j: unknown; n: string }>(
        'SELECT $1::bytea AS b, $2::timestamptz AS at, $3::jsonb AS j, 9007199254740993::int8 AS n',
        [pooled, at, JSON.stringify({ a: [1, 2] })],
      );
      expect(rows[0]!.b).toBeInstanceOf(Uint8Array);
      expect(Buffer.from(rows[0]!.b).toString()).toBe('hello bytes');
      expect(rows[0]!.at).toBeInstanceOf(Date);
      expect(rows[0]!.at.getTime()).toBe(at.getTime());
      expect(rows[0]!.j).toEqual({ a: [1, 2] });
    });
  });

  it('ends its thread on close, and refuses statements after it', async () => {
    // The process's threads (Linux); a worker thread is one of them while it runs.
    const threads = () => readdirSync('/proc/self/task').length;
    const before = threads();
    const db = await openEmbeddedDatabase(copyTemplate(inject('dbTemplate')));
    await db.query('SELECT 1');
    const open = threads();
    expect(open).toBeGreaterThan(before);
    await db.close();
    expect(threads()).toBeLessThan(open);
    await expect(db.query('SELECT 1')).rejects.toThrow('the embedded database is closed');
    await expect(db.transaction(async () => undefined)).rejects.toThrow('closed');
  });
});

describe('StatementQueue', () => {
  const piece = (order: string[], name: string) => async () => {
    order.push(name);
    await nextTurn();
  };

  it('runs a single statement ahead of waiting transactions, after the one under way', async () => {
    // In a burst of creates, a key's lookup must not wait for every create queued before it.
    const order: string[] = [];
    const queue = new StatementQueue();
    const running = queue.take(piece(order, 'transaction 1'));
    const waiting = [2, 3].map((n) => queue.take(piece(order, `transaction ${n}`)));
    const lookup = queue.take(piece(order, 'lookup'), { first: true });
    await Promise.all([running, ...waiting, lookup]);
    expect(order).toEqual(['transaction 1', 'lookup', 'transaction 2', 'transaction 3']);
  });

  it('lets no more than FIRST_AHEAD_LIMIT single statements in a row go ahead of a transaction', async () => {
    // A flood of lookups (made-up secrets, each a statement) must not starve the creates.
    const order: string[] = [];
    const queue = new StatementQueue();
    const running = queue.take(piece(order, 'running'));
    const transaction = queue.take(async () => order.push('transaction'));
    const lookups = Array.from({ length: 3 * FIRST_AHEAD_LIMIT }, (_, i) =>
      queue.take(async () => order.push(`lookup ${i}`), { first: true }),
    );
    await Promise.all([running, transaction, ...lookups]);
    expect(order.indexOf('transaction')).toBe(1 + FIRST_AHEAD_LIMIT);
  });

  it('runs an idle piece only when no other piece waits', async () => {
    // The warm-up (warmUp.ts) must never make a request's statement wait for more than the one
    // idle piece under way.
    const order: string[] = [];
    const queue = new StatementQueue();
    const running = queue.take(piece(order, 'running'));
    let late: Promise<void> | undefined;
    const idle = [
      queue.take(
        async () => {
          order.push('idle 1');
          late = queue.take(piece(order, 'late lookup'), { first: true });
          await nextTurn();
        },
        { idle: true },
      ),
      queue.take(piece(order, 'idle 2'), { idle: true }),
    ];
    const transaction = queue.take(piece(order, 'transaction'));
    const lookup = queue.take(piece(order, 'lookup'), { first: true });
    await Promise.all([running, ...idle, transaction, lookup]);
    await late;
    expect(order).toEqual(['running', 'lookup', 'transaction', 'idle 1', 'late lookup', 'idle 2']);
  });

  it('runs one piece at a time, and runs a piece sent when the queue is idle at once', async () => {
    const queue = new StatementQueue();
    let running = 0;
    let most = 0;
    const pieces = Array.from({ length: 5 }, () =>
      queue.take(async () => {
        most = Math.max(most, ++running);
        await nextTurn();
        running--;
      }),
    );
    await Promise.all(pieces);
    expect(most).toBe(1);
    const order: string[] = [];
    const transaction = queue.take(async () => order.push('transaction'));
    const statement = queue.take(async () => order.push('statement'), { first: true });
    await Promise.all([transaction, statement]);
    expect(order).toEqual(['transaction', 'statement']);
  });

  it('goes on after a failed piece, and after one that throws before its promise', async () => {
    const order: string[] = [];
    const queue = new StatementQueue();
    const failing = queue.take(() => Promise.reject(new Error('bad statement')));
    const throwing = queue.take(() => {
      throw new Error('thrown before its promise');
    });
    const next = queue.take(async () => order.push('next'));
    await expect(failing).rejects.toThrow('bad statement');
    await expect(throwing).rejects.toThrow('thrown before its promise');
    await next;
    expect(order).toEqual(['next']);
  });
});
