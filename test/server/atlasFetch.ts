// SPDX-License-Identifier: GPL-3.0-or-later
import { existsSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { expect, vi } from 'vitest';

/** A bound, not an expectation: nice 19 beside two busy test workers gets little of a core. */
export const KEPT_WITHIN_MS = 240_000;

/** An answer as the server sent it: the body still in its content encoding. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A GET whose body comes back as sent (fetch would decode the content encoding itself). */
export function rawGet(url: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The body with its content encoding undone. */
export function decoded(answer: RawAnswer): Buffer {
  const encoding = answer.headers['content-encoding'];
  if (encoding === 'br') return brotliDecompressSync(answer.body);
  if (encoding === 'gzip') return gunzipSync(answer.body);
  return answer.body;
}

/**
 * Waits until the avatar's atlas is compressed and kept (its `.br` and `.gz` files): made in a
 * child at the lowest priority, so on a busy machine it takes what the others leave.
 */
export async function atlasKept(dataDir: string, avatarId: string): Promise<string[]> {
  const dir = join(dataDir, 'cache', 'atlas-web');
  const kept = () =>
    existsSync(dir)
      ? readdirSync(dir).filter((f) => f.startsWith(`${avatarId}-`) && !f.endsWith('.tmp'))
      : [];
  await vi.waitFor(
    () =>
      expect(
        kept()
          .map((f) => f.split('.').pop())
          .sort(),
      ).toEqual(['br', 'gz']),
    {
      timeout: KEPT_WITHIN_MS,
      interval: 100,
    },
  );
  return kept().sort();
}
