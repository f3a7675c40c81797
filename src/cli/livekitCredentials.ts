// SPDX-License-Identifier: GPL-3.0-or-later
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBase62 } from '@visage-avatar/client/api';
import { UsageError } from './usage.js';

export interface LivekitCredentials {
  apiKey: string;
  apiSecret: string;
}

/** The file in the data directory that holds the embedded LiveKit server's key and secret. */
export const LIVEKIT_CREDENTIALS_FILE = 'livekit-credentials.json';

/**
 * The embedded LiveKit server's API key and secret for one data directory: generated at random
 * on the first start, written with mode 0600, and read back on every later start, so tokens,
 * agents and examples configured once keep working. Never the well-known `devkey`/`secret`.
 */
export function livekitCredentialsFor(dataDir: string): LivekitCredentials & { created: boolean } {
  const path = join(dataDir, LIVEKIT_CREDENTIALS_FILE);
  let text: string | undefined;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (text !== undefined) {
    const parsed = parseCredentials(text);
    if (!parsed) {
      throw new UsageError(`${path} is not valid: delete it to generate new LiveKit credentials`);
    }
    // Tighten a file someone loosened: the secret signs every LiveKit token.
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
    return { ...parsed, created: false };
  }
  const credentials = { apiKey: `API${randomBase62(12)}`, apiSecret: randomBase62(43) };
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // `wx`: two starts racing on a fresh directory must not overwrite each other's secret.
  writeFileSync(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return { ...credentials, created: true };
}

function parseCredentials(text: string): LivekitCredentials | undefined {
  try {
    const v = JSON.parse(text) as Partial<LivekitCredentials>;
    const ok = (s: unknown) => typeof s === 'string' && /^[0-9A-Za-z_-]{8,128}$/.test(s);
    return ok(v.apiKey) && ok(v.apiSecret)
      ? { apiKey: v.apiKey!, apiSecret: v.apiSecret! }
      : undefined;
  } catch {
    return undefined;
  }
}

/** `--livekit-keys KEY:SECRET` / `--keys KEY:SECRET`: one pair, both parts present. */
export function parseKeyPair(value: string, flag: string): LivekitCredentials {
  const separator = value.indexOf(':');
  const apiKey = value.slice(0, separator).trim();
  const apiSecret = value.slice(separator + 1).trim();
  if (separator <= 0 || !apiKey || !apiSecret) {
    throw new UsageError(`${flag} expects KEY:SECRET, got '${value}'`);
  }
  return { apiKey, apiSecret };
}
