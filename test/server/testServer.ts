// SPDX-License-Identifier: GPL-3.0-or-later
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { testLogger } from '../support/testLog.js';
import { ID_PREFIXES, newSecretKey } from '@visage-avatar/client/api';
import { DEFAULT_LIMITS, type Limits, type ServerConfig } from '../../src/server/config.js';
import { keyAdmin } from '../../src/server/admin/keyAdmin.js';
import { startVisage, type StartOptions, type VisageServer } from '../../src/server/runtime.js';
import { freshPostgresDatabase } from '../support/embeddedPostgres.js';
import { TtsEngines } from '../../src/media/tts/index.js';
import { preloadSpeechModel } from '../../src/server/assets/speechModelPreload.js';
import { DetachedMediaCore } from './detachedMedia.js';
import { copyTemplate } from './templateDatabase.js';

export interface TestServer extends VisageServer {
  dataDir: string;
  /** The PostgreSQL database it uses, when it uses one. */
  databaseUrl?: string;
  /** A key created for the test, with its secret. */
  secret: string;
  keyId: string;
  /** fetch() against the API with the test key (override with `auth`). */
  call(method: string, path: string, init?: CallInit): Promise<Response>;
  newKey(cap?: number): Promise<{ secret: string; id: string }>;
}

export interface CallInit {
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
  /** The secret to send; `null` sends no Authorization header. */
  auth?: string | null;
}

export const LIVEKIT_FOR_TESTS = {
  url: 'ws://127.0.0.1:7880',
  apiKey: 'devkey',
  apiSecret: 'secret-for-tests-only-0123456789',
};

export interface TestServerOptions {
  dataDir?: string;
  limits?: Partial<Limits>;
  config?: Partial<ServerConfig>;
  start?: StartOptions;
  cap?: number;
  /**
   * Load the voice-activity model and espeak-ng before answering, as `visage dev` does once it
   * listens. For a file whose tests make voices: its first voice would otherwise load them
   * inside one test's 30 s, which a CI run on a busy 2-core machine once exceeded (15 to 30 s).
   * Give the file's `beforeAll` a longer bound (180 s).
   */
  speechModelLoaded?: boolean;
}

/** In the `postgres` test project (vitest.config.ts), servers use a real PostgreSQL server. */
export const onPostgres = process.env.VISAGE_TEST_DATABASE === 'postgres';

/**
 * A real Visage server on an ephemeral loopback port with a real database: a copy of the
 * embedded template in a temp dir, or in the `postgres` project a fresh PostgreSQL database
 * (unless `dataDir` or `config.databaseUrl` say otherwise).
 */
export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const databaseUrl =
    opts.config?.databaseUrl ??
    (onPostgres && !opts.dataDir ? await freshPostgresDatabase(inject('postgresUrl')) : undefined);
  const dataDir =
    opts.dataDir ??
    (databaseUrl
      ? mkdtempSync(join(tmpdir(), 'visage-test-'))
      : copyTemplate(inject('dbTemplate')));
  const server = await startVisage(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      databaseUrl,
      nodeId: 'test-node',
      maxSessions: 50,
      allowPrivateUrls: false,
      limits: { ...DEFAULT_LIMITS, ...opts.limits },
      livekit: LIVEKIT_FOR_TESTS,
      version: 'test',
      ...opts.config,
    },
    {
      log: testLogger(),
      media: new DetachedMediaCore(),
      ...opts.start,
    },
  );
  if (opts.speechModelLoaded) await preloadSpeechModel(testLogger(), undefined, new TtsEngines());
  const newKey = async (cap = opts.cap ?? 3) => {
    const created = await keyAdmin.create(server.store, 'test', cap);
    return { secret: created.secret, id: created.key.id };
  };
  const key = await newKey();
  const call = (method: string, path: string, init: CallInit = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    const auth = init.auth === undefined ? key.secret : init.auth;
    if (auth !== null) headers.authorization = `Bearer ${auth}`;
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers['content-type'] ??= 'application/json';
    }
    return fetch(server.url + path, { method, headers, body });
  };
  return { ...server, dataDir, databaseUrl, secret: key.secret, keyId: key.id, call, newKey };
}

/** An `sk_` secret that was never issued. */
export const unknownSecret = () => newSecretKey();
export const unknownSessionId = () => `${ID_PREFIXES.session}${'x'.repeat(24)}`;
