// SPDX-License-Identifier: GPL-3.0-or-later
import { randomBytes } from 'node:crypto';
import type { Queryable } from './database.js';

/**
 * Secrets the service makes for itself (`server_secrets`), such as the key that signs atlas
 * URLs. The first node to ask makes the row; every later ask, on any node of a cluster and after
 * any restart, reads the same one, so a URL one node signed verifies on all of them.
 */

/** 32 random bytes: the key of an HMAC-SHA256. */
const SECRET_BYTES = 32;

export async function serverSecret(db: Queryable, name: string): Promise<Buffer> {
  // Two nodes asking at once both insert; the conflict keeps the first, and both read it.
  await db.query(
    `INSERT INTO server_secrets (name, secret, created_at) VALUES ($1, $2, now())
     ON CONFLICT (name) DO NOTHING`,
    [name, randomBytes(SECRET_BYTES).toString('base64url')],
  );
  const r = await db.query<{ secret: string }>(
    'SELECT secret FROM server_secrets WHERE name = $1',
    [name],
  );
  const secret = r.rows[0]?.secret;
  if (!secret) throw new Error(`server secret ${name} could not be made`);
  return Buffer.from(secret, 'base64url');
}
