// SPDX-License-Identifier: Apache-2.0
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Avatar } from '@visage-avatar/client/api';
import type { VisageClient } from '@visage-avatar/client';
import { VisageException } from './errors.js';
import { pluginLog } from './log.js';

/** A portrait for a photo avatar: a file path or the picture's bytes. */
export type AvatarImage = string | Uint8Array;

/** Name prefix of the photo avatars the plugin makes; the rest is the picture's content hash. */
const NAME_PREFIX = 'photo ';
/** The most avatars a lookup pages through before it makes a new one. */
const MAX_LISTED = 2_000;
/**
 * How long the making of an avatar is waited for, at least. The service builds it inside the
 * request: about 3 s on a quiet 2-core machine, 7 s on a fresh node that loads its face models
 * first, and past the framework's 10 s request timeout on a busy one. Given up early, the build
 * still completed on the service, and the start failed while an avatar the plugin never learnt
 * of was stored.
 */
export const AVATAR_BUILD_ANSWER_TIMEOUT_MS = 120_000;

/** Makings in flight in this process, by service, key and picture: one build per picture. */
const inFlight = new Map<string, Promise<Avatar>>();

/**
 * The photo avatar for `image`, made once per key: its name carries the picture's content hash
 * (`photo <sha256/16>`), so the same picture, from a path or as bytes, in this process or a
 * later one, finds the avatar made before instead of building another. Concurrent starts in
 * one process share one making.
 */
export async function ensurePhotoAvatar(
  client: VisageClient,
  service: { apiUrl: string; apiKey: string },
  image: AvatarImage,
  signal?: AbortSignal,
): Promise<Avatar> {
  const bytes = typeof image === 'string' ? await readPortrait(image) : image;
  const name = NAME_PREFIX + createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  const key = createHash('sha256')
    .update(`${service.apiUrl}\0${service.apiKey}\0${name}`)
    .digest('hex');
  let making = inFlight.get(key);
  if (!making) {
    making = findOrCreate(
      client,
      name,
      bytes,
      typeof image === 'string' ? image : undefined,
      signal,
    );
    inFlight.set(key, making);
    void making.then(
      () => inFlight.delete(key),
      () => inFlight.delete(key),
    );
  }
  return making;
}

async function findOrCreate(
  client: VisageClient,
  name: string,
  bytes: Uint8Array,
  path: string | undefined,
  signal?: AbortSignal,
): Promise<Avatar> {
  const existing = await findPhotoAvatar(client, name, signal);
  if (existing) {
    pluginLog().debug({ avatar_id: existing.avatar_id, name }, 'reusing the photo avatar');
    return existing;
  }
  const started = Date.now();
  const avatar = await client.avatars.create(
    { name, image: bytes, filename: path ? basename(path) : 'portrait' },
    { signal, timeoutMs: AVATAR_BUILD_ANSWER_TIMEOUT_MS },
  );
  pluginLog().info(
    { avatar_id: avatar.avatar_id, name, build_ms: Date.now() - started },
    'made a photo avatar from the portrait',
  );
  return avatar;
}

/** The account's photo avatars come first in the list, newest first. */
async function findPhotoAvatar(
  client: VisageClient,
  name: string,
  signal?: AbortSignal,
): Promise<Avatar | undefined> {
  let after: string | undefined;
  for (let seen = 0; seen < MAX_LISTED;) {
    const page = await client.avatars.list({ limit: 100, after }, { signal });
    const found = page.data.find((a) => a.source === 'photo' && a.name === name);
    if (found) return found;
    // Stock avatars follow the photo ones: past the first, no photo avatar remains.
    if (!page.has_more || page.data.some((a) => a.source === 'stock')) return undefined;
    seen += page.data.length;
    after = page.data.at(-1)?.avatar_id;
  }
  return undefined;
}

async function readPortrait(path: string): Promise<Uint8Array> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new VisageException(
      `avatarImage: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      { cause: err },
    );
  }
}
