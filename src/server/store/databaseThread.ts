// SPDX-License-Identifier: GPL-3.0-or-later
import { rmSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import {
  toThreadError,
  type DatabaseTask,
  type DatabaseTaskResult,
  type DatabaseThreadData,
} from './databaseThreadProtocol.js';
import {
  TransactionChannel,
  type ChannelAnswer,
  type ChannelRequest,
} from './transactionChannel.js';

/**
 * The embedded database's thread: PGlite (PostgreSQL in WebAssembly, each statement run
 * synchronously) opened on the data directory, running the statements the API's thread posts,
 * one task at a time (database.ts keeps them in order and transactions whole).
 */

const data = workerData as DatabaseThreadData;
const port = parentPort!;
const channel = new TransactionChannel(data.channel);

/** PGlite compiled once per process (database.ts), not once per thread. */
const options = { pgliteWasmModule: data.pgliteWasmModule };

async function open(): Promise<PGlite> {
  try {
    const pg = new PGlite(data.path, options);
    await pg.waitReady;
    return pg;
  } catch (err) {
    if (!data.fromTemplate) throw err;
    // A template this PGlite cannot open: a new database, as a first start without one makes.
    rmSync(data.path, { recursive: true, force: true });
    const pg = new PGlite(data.path, options);
    await pg.waitReady;
    return pg;
  }
}

const opened = open();
// An open that fails is told to every task (the first is `open`); not an unhandled rejection.
opened.catch(() => undefined);

async function run(id: number, task: DatabaseTask): Promise<DatabaseTaskResult> {
  const pg = await opened;
  switch (task.op) {
    case 'open':
      return undefined;
    case 'query':
      return { rows: (await pg.query(task.sql, task.params)).rows };
    case 'exec':
      await pg.exec(task.sql);
      return undefined;
    case 'transaction':
      await transaction(pg, task.from, (answer) => port.postMessage({ id, part: answer }));
      return undefined;
    case 'close':
      await pg.close();
      return undefined;
  }
}

/**
 * Runs the statements the API's thread sends through the channel, between BEGIN and its `end`.
 * This thread sleeps between them (it has nothing else to do: PGlite has one connection).
 */
async function transaction(
  pg: PGlite,
  from: number,
  asMessage: (answer: ChannelAnswer) => void,
): Promise<void> {
  await pg.exec('BEGIN');
  let seen = from;
  for (;;) {
    let request: ChannelRequest;
    try {
      ({ n: seen, request } = channel.next(seen));
      if (request.op !== 'end') channel.reply(seen, await statement(pg, request), asMessage);
    } catch (err) {
      // The channel failed (an answer that cannot be serialized): the task fails, and the
      // transaction must not stay open on the connection.
      await pg.exec('ROLLBACK');
      throw err;
    }
    if (request.op === 'end') {
      await pg.exec(request.commit ? 'COMMIT' : 'ROLLBACK');
      return;
    }
  }
}

/** A transaction's statement, its error as its answer. */
async function statement(
  pg: PGlite,
  request: Exclude<ChannelRequest, { op: 'end' }>,
): Promise<ChannelAnswer> {
  try {
    return request.op === 'query'
      ? { rows: (await pg.query(request.sql, request.params)).rows }
      : (await pg.exec(request.sql), { done: true });
  } catch (err) {
    return { error: toThreadError(err) };
  }
}

port.on('message', ({ id, task }: { id: number; task: DatabaseTask }) => {
  run(id, task).then(
    (result) => port.postMessage({ id, result }),
    (err: unknown) => port.postMessage({ id, error: toThreadError(err) }),
  );
});
