import { inject } from 'vitest';
import pino from 'pino';
import { ID_PREFIXES, newSecretKey } from '../../src/api/index.js';
import { DEFAULT_LIMITS, type Limits, type ServerConfig } from '../../src/server/config.js';
import { keyAdmin } from '../../src/server/keyAdmin.js';
import { startVisage, type StartOptions, type VisageServer } from '../../src/server/runtime.js';
import { DetachedMediaCore } from './detachedMedia.js';
import { copyTemplate } from './templateDatabase.js';

export interface TestServer extends VisageServer {
  dataDir: string;
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
}

/** A real Visage server on an ephemeral loopback port with a real database in a temp dir. */
export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? copyTemplate(inject('dbTemplate'));
  const server = await startVisage(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      nodeId: 'test-node',
      maxSessions: 50,
      allowPrivateUrls: false,
      limits: { ...DEFAULT_LIMITS, ...opts.limits },
      livekit: LIVEKIT_FOR_TESTS,
      version: 'test',
      ...opts.config,
    },
    {
      log: pino({ level: process.env.VISAGE_TEST_LOG_LEVEL ?? 'silent' }),
      media: new DetachedMediaCore(),
      ...opts.start,
    },
  );
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
  return { ...server, dataDir, secret: key.secret, keyId: key.id, call, newKey };
}

/** An `sk_` secret that was never issued. */
export const unknownSecret = () => newSecretKey();
export const unknownSessionId = () => `${ID_PREFIXES.session}${'x'.repeat(24)}`;
