// SPDX-License-Identifier: GPL-3.0-or-later
import { chmodSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { z } from 'zod';
import { keyAdmin, KeyNotFoundError } from './keyAdmin.js';
import type { Store } from '../store/store.js';

/**
 * Key administration for CLI commands run while this server owns the data directory. A Unix
 * socket inside the data directory, mode 0600: only whoever can read the database can use it.
 */
export function adminSocketPath(dataDir: string): string {
  return join(dataDir, 'admin.sock');
}

const createBody = z.strictObject({
  name: z.string().min(1).max(100),
  cap: z.number().int().min(1),
});
const capBody = z.strictObject({ cap: z.number().int().min(1) });

export interface AdminSocketHooks {
  /** Sessions a revocation ended in the database: stop their media now. */
  sessionsEnded(sessionIds: string[]): Promise<void>;
}

export async function startAdminSocket(
  store: Store,
  dataDir: string,
  hooks: AdminSocketHooks,
): Promise<Server> {
  const app = new Hono();
  app.get('/keys', async (c) => c.json(await keyAdmin.list(store)));
  app.post('/keys', async (c) => {
    const body = createBody.parse(await c.req.json());
    return c.json(await keyAdmin.create(store, body.name, body.cap), 201);
  });
  app.post('/keys/:id/revoke', async (c) =>
    c.json(await keyAdmin.revoke(store, c.req.param('id'), hooks.sessionsEnded)),
  );
  app.post('/keys/:id/cap', async (c) => {
    const body = capBody.parse(await c.req.json());
    return c.json(await keyAdmin.setCap(store, c.req.param('id'), body.cap));
  });
  app.onError((err, c) =>
    c.json({ error: err.message }, err instanceof KeyNotFoundError ? 404 : 400),
  );
  const path = adminSocketPath(dataDir);
  rmSync(path, { force: true });
  const server = createServer(getRequestListener(app.fetch));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o600);
  return server;
}
