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

/**
 * The embedded database's thread: PGlite (PostgreSQL in WebAssembly, each statement run
 * synchronously) opened on the data directory, running the statements the API's thread posts,
 * one task at a time (database.ts keeps them in order and transactions whole).
 */

const data = workerData as DatabaseThreadData;
const port = parentPort!;

async function open(): Promise<PGlite> {
  try {
    const pg = new PGlite(data.path);
    await pg.waitReady;
    return pg;
  } catch (err) {
    if (!data.fromTemplate) throw err;
    // A template this PGlite cannot open: a new database, as a first start without one makes.
    rmSync(data.path, { recursive: true, force: true });
    const pg = new PGlite(data.path);
    await pg.waitReady;
    return pg;
  }
}

const opened = open();
// An open that fails is told to every task (the first is `open`); not an unhandled rejection.
opened.catch(() => undefined);

async function run(task: DatabaseTask): Promise<DatabaseTaskResult> {
  const pg = await opened;
  switch (task.op) {
    case 'open':
      return undefined;
    case 'query':
      return { rows: (await pg.query(task.sql, task.params)).rows };
    case 'exec':
      await pg.exec(task.sql);
      return undefined;
    case 'close':
      await pg.close();
      return undefined;
  }
}

port.on('message', ({ id, task }: { id: number; task: DatabaseTask }) => {
  run(task).then(
    (result) => port.postMessage({ id, result }),
    (err: unknown) => port.postMessage({ id, error: toThreadError(err) }),
  );
});
