// SPDX-License-Identifier: GPL-3.0-or-later
import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { Store } from '../../src/server/store/store.js';
import {
  postgresUnavailableReason,
  startTestPostgres,
  TEMPLATE_DATABASE,
  type TestPostgres,
} from './embeddedPostgres.js';

/**
 * vitest global setup of the `postgres` project: one real PostgreSQL server for the run, and a
 * migrated template database that each test copies (`freshPostgresDatabase`). Provides
 * `postgresUrl` (the server's `postgres` database), or '' where PostgreSQL cannot run, which
 * the suites then skip loudly; under CI=true that is an error instead.
 */
export default async function setup(project: TestProject) {
  const say = (line: string) => console.log(`[postgres tests] ${line}`);
  const reason = postgresUnavailableReason();
  let server: TestPostgres | undefined;
  try {
    if (reason) throw new Error(reason);
    server = await startTestPostgres(say);
  } catch (err) {
    if (process.env.CI) throw err;
    console.warn(
      `\n!!! [postgres tests] SKIPPED: a real PostgreSQL could not start here (${String(err)}).\n` +
        '!!! The store, the HTTP API and the cap race on PostgreSQL are NOT tested in this run.\n',
    );
    project.provide('postgresUrl', '');
    return;
  }
  const admin = new pg.Client({ connectionString: server.url() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await admin.end();
  const store = await Store.openPostgres(server.url(TEMPLATE_DATABASE));
  await store.close();
  say(`PostgreSQL at ${server.url().replace(/:[^:@/]+@/, ':***@')}`);
  project.provide('postgresUrl', server.url());
  return () => server.dispose();
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}
