// SPDX-License-Identifier: GPL-3.0-or-later
import { Agent, request } from 'undici';
import { DEFAULT_LIMITS } from '../server/config.js';
import { acquireDataDirLock, readLockOwner } from '../server/admin/dataDirLock.js';
import { keyAdmin, type KeyView } from '../server/admin/keyAdmin.js';
import { Store } from '../server/store/store.js';
import { dataDirFrom } from './dataDir.js';
import { installedDatabaseTemplate } from './databaseTemplateDir.js';
import { readEnvironment, type Environment } from './environment.js';
import { intFlag, parseFlags, UsageError } from './usage.js';

export const KEYS_USAGE = `Usage: visage keys <command> [options]

Manage secret keys (sk_...). Keys are stored hashed; a secret is printed once, at creation.
Works whether or not a server is running on the same data directory: a running server applies
the change at once. With $DATABASE_URL set, the keys are in that PostgreSQL server, and every
node that uses it applies a change at once.

Commands:
  create --name NAME [--cap N]   create a key (cap: concurrent sessions, default ${DEFAULT_LIMITS.defaultConcurrencyCap})
  list                           list keys (never prints secrets)
  update ID --cap N              change a key's concurrency cap
  revoke ID                      revoke a key; it stops working at once

Options:
  --data-dir DIR                 data directory (default: $VISAGE_DATA_DIR or ./.visage)
  -h, --help                     show this help`;

/** Runs one key operation through the running server's admin socket, or on the database. */
interface KeyBackend {
  create(name: string, cap: number): Promise<{ key: KeyView; secret: string }>;
  list(): Promise<KeyView[]>;
  revoke(id: string): Promise<KeyView>;
  setCap(id: string, cap: number): Promise<KeyView>;
}

function socketBackend(socketPath: string): KeyBackend & { close(): Promise<void> } {
  const agent = new Agent({ connect: { socketPath } });
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const res = await request(`http://visage-admin${path}`, {
      method,
      dispatcher: agent,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.body.json()) as T & { error?: string };
    if (res.statusCode >= 400)
      throw new Error(json.error ?? `admin socket answered ${res.statusCode}`);
    return json;
  };
  return {
    create: (name, cap) => call('POST', '/keys', { name, cap }),
    list: () => call('GET', '/keys'),
    revoke: (id) => call('POST', `/keys/${encodeURIComponent(id)}/revoke`),
    setCap: (id, cap) => call('POST', `/keys/${encodeURIComponent(id)}/cap`, { cap }),
    close: () => agent.close(),
  };
}

function storeBackend(store: Store): KeyBackend {
  return {
    create: (name, cap) => keyAdmin.create(store, name, cap),
    list: () => keyAdmin.list(store),
    revoke: (id) => keyAdmin.revoke(store, id),
    setCap: (id, cap) => keyAdmin.setCap(store, id, cap),
  };
}

async function withBackend<T>(
  env: Environment,
  dataDir: string,
  fn: (b: KeyBackend) => Promise<T>,
): Promise<T> {
  const databaseUrl = env.DATABASE_URL;
  if (databaseUrl) {
    // Nodes read keys from the database on every request (no cache): a change applies at once.
    const store = await Store.openPostgres(databaseUrl);
    try {
      return await fn(storeBackend(store));
    } finally {
      await store.close();
    }
  }
  const owner = readLockOwner(dataDir);
  if (owner?.adminSocket) {
    const backend = socketBackend(owner.adminSocket);
    try {
      return await fn(backend);
    } finally {
      await backend.close();
    }
  }
  const lock = acquireDataDirLock(dataDir, { pid: process.pid, role: 'cli' });
  const store = await Store.openEmbedded(dataDir, { template: installedDatabaseTemplate() });
  try {
    return await fn(storeBackend(store));
  } finally {
    await store.close();
    lock.release();
  }
}

function formatKey(k: KeyView): string {
  const state = k.revoked_at ? `revoked ${k.revoked_at}` : 'active';
  return `${k.id}  ${k.name}  ${k.hint}  cap=${k.cap}  created ${k.created_at}  ${state}`;
}

export async function runKeysCommand(argv: string[], out: (line: string) => void): Promise<number> {
  const [sub, ...rest] = argv;
  if (!sub || sub === '-h' || sub === '--help' || sub === 'help') {
    out(KEYS_USAGE);
    return sub ? 0 : 2;
  }
  const env = readEnvironment();
  const common = { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;
  switch (sub) {
    case 'create': {
      const { values } = parseFlags(rest, {
        ...common,
        name: { type: 'string' },
        cap: { type: 'string' },
      });
      if (values.help) return (out(KEYS_USAGE), 0);
      if (!values.name?.trim()) throw new UsageError('keys create needs --name NAME');
      const defaultCap = env.VISAGE_DEFAULT_CAP ?? DEFAULT_LIMITS.defaultConcurrencyCap;
      const cap = intFlag(values.cap, 'cap', defaultCap, 1);
      const created = await withBackend(env, dataDirFrom(values['data-dir'], env), (b) =>
        b.create(values.name!.trim(), cap),
      );
      out(`Created key ${created.key.id} (${created.key.name}, cap ${created.key.cap}).`);
      out(`Secret (shown once, store it now): ${created.secret}`);
      return 0;
    }
    case 'list': {
      const { values } = parseFlags(rest, common);
      if (values.help) return (out(KEYS_USAGE), 0);
      const keys = await withBackend(env, dataDirFrom(values['data-dir'], env), (b) => b.list());
      if (keys.length === 0) out('No keys. Create one with: visage keys create --name NAME');
      for (const k of keys) out(formatKey(k));
      return 0;
    }
    case 'revoke': {
      const { values, positionals } = parseFlags(rest, common, 1);
      if (values.help) return (out(KEYS_USAGE), 0);
      if (!positionals[0])
        throw new UsageError('keys revoke needs the key id (see visage keys list)');
      const k = await withBackend(env, dataDirFrom(values['data-dir'], env), (b) =>
        b.revoke(positionals[0]!),
      );
      out(`Revoked ${k.id} (${k.name}).`);
      return 0;
    }
    case 'update': {
      const { values, positionals } = parseFlags(rest, { ...common, cap: { type: 'string' } }, 1);
      if (values.help) return (out(KEYS_USAGE), 0);
      if (!positionals[0]) throw new UsageError('keys update needs the key id');
      if (values.cap === undefined) throw new UsageError('keys update needs --cap N');
      const cap = intFlag(values.cap, 'cap', 0, 1);
      const k = await withBackend(env, dataDirFrom(values['data-dir'], env), (b) =>
        b.setCap(positionals[0]!, cap),
      );
      out(`Key ${k.id} (${k.name}) now has cap ${k.cap}.`);
      return 0;
    }
    default:
      throw new UsageError(`unknown keys command: ${sub}`);
  }
}
