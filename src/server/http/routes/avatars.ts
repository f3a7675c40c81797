// SPDX-License-Identifier: GPL-3.0-or-later
import { AssetError } from '../../assets/assetError.js';
import type { Context, Hono } from 'hono';
import {
  createAvatarFormSchema,
  createAvatarRequestSchema,
  ENDPOINTS,
  ID_PREFIXES,
  listAvatarsQuerySchema,
  newId,
} from '@visage-avatar/client/api';
import { findStockVoice } from '../../../media/avatarCatalogue.js';
import { ApiError } from '../apiError.js';
import { readMultipartBody } from '../multipartBody.js';
import { honoPath } from '../honoPath.js';
import { isJsonType, mediaType, parseJsonBody, parseWith } from '../validation.js';
import type { ApiKeyRecord, AvatarRecord } from '../../store/store.js';
import { avatarToWire } from '../wireObjects.js';
import type { AppDeps, AppEnv } from './context.js';

/**
 * Avatars: the stock ones and the account's photo avatars, one kind of record (the store's
 * `avatars` table). POST builds a photo avatar within the request; nothing is stored unless the
 * build succeeded.
 */
export function mountAvatarRoutes(app: Hono<AppEnv>, deps: AppDeps): void {
  app.post(ENDPOINTS.createAvatar.path, async (c) => {
    const key = c.get('key');
    const { name, voiceId, bytes, param } = await readCreateRequest(c, deps);
    const askedVoiceId = await checkVoice(deps, key, voiceId);
    const id = newId(ID_PREFIXES.avatar);
    const log = c.get('log').child({ avatar_id: id });
    const blobs = { image: `${id}.image`, build: `${id}.build`, preview: `${id}.preview` };
    const built = await deps.avatarBuilder.build(bytes, blobs.build, log, param);
    // Without a voice asked for, the stock voice of the face's apparent register (the build's
    // estimate; docs/photo-avatars.md#the-voice). Stored: the avatar is one record.
    const defaultVoiceId = askedVoiceId ?? built.voice.voiceId;
    // The row first, then the files it owns; if storing them fails, the row goes too.
    const avatar = await deps.store.insertAvatar({
      id,
      keyId: key.id,
      name,
      description: null,
      source: 'photo',
      defaultVoiceId,
      design: null,
      imageBlobId: blobs.image,
      buildBlobId: blobs.build,
      previewBlobId: blobs.preview,
    });
    try {
      await deps.files.put(blobs.image, bytes);
      await deps.files.put(blobs.build, built.build);
      await deps.files.put(blobs.preview, built.preview);
    } catch (err) {
      await deps.store.deleteAvatar(key.id, id).catch(() => undefined);
      await Promise.all(
        Object.values(blobs).map((b) => deps.files.delete(b).catch(() => undefined)),
      );
      throw err;
    }
    log.info(
      {
        bytes: bytes.byteLength,
        build_bytes: built.build.byteLength,
        default_voice_id: defaultVoiceId,
        voice_from: askedVoiceId ? 'request' : 'portrait',
        male_probability: Math.round(built.voice.maleProbability * 1000) / 1000,
        register: built.voice.register,
      },
      'photo avatar created',
    );
    // Its atlas compressed for browsers now, at the lowest priority: not awaited (a failure is
    // logged, and the first fetch tries again), and no session's create ever waits for it.
    void deps.atlasDelivery.prepare(avatar);
    return c.json(avatarToWire(avatar), 201);
  });

  app.get(ENDPOINTS.listAvatars.path, async (c) => {
    const q = parseWith(listAvatarsQuerySchema, c.req.query(), 'query');
    const stock = (await deps.store.listStockAvatars()).map(avatarToWire);
    // Photo avatars first (newest first), then the stock ones; the cursor spans both.
    const stockIndex = q.after ? stock.findIndex((a) => a.avatar_id === q.after) : -1;
    if (stockIndex >= 0) {
      const rest = stock.slice(stockIndex + 1);
      return c.json({ data: rest.slice(0, q.limit), has_more: rest.length > q.limit });
    }
    const page = await deps.store.listPhotoAvatars(c.get('key').id, q.limit, q.after);
    if (page === 'unknown_cursor') {
      throw new ApiError('validation_failed', '`after` is not an avatar of this account.', {
        param: 'after',
      });
    }
    const data = page.items.map(avatarToWire);
    if (page.hasMore) return c.json({ data, has_more: true });
    const room = q.limit - data.length;
    return c.json({ data: [...data, ...stock.slice(0, room)], has_more: stock.length > room });
  });

  app.get(honoPath(ENDPOINTS.getAvatar.path), async (c) => {
    return c.json(avatarToWire(await findAvatar(c, deps)));
  });

  app.get(honoPath(ENDPOINTS.getAvatarPreview.path), async (c) => {
    const avatar = await findAvatar(c, deps);
    let png: Uint8Array;
    if (avatar.source === 'stock') {
      png = await deps.stockPreviews.preview(avatar.design ?? '');
    } else {
      try {
        png = await deps.files.get(avatar.previewBlobId ?? '');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        // Deleted between the lookup and the read.
        throw avatarNotFound(avatar.id);
      }
    }
    return c.body(png as Uint8Array<ArrayBuffer>, 200, {
      'content-type': 'image/png',
      'cache-control': 'private, max-age=3600',
    });
  });

  app.delete(honoPath(ENDPOINTS.deleteAvatar.path), async (c) => {
    const id = c.req.param('id') ?? '';
    const key = c.get('key');
    const current = await deps.store.getAvatar(key.id, id);
    if (current?.source === 'stock') {
      throw new ApiError(
        'avatar_not_deletable',
        `\`${id}\` is a stock avatar: it ships with Visage and cannot be deleted.`,
      );
    }
    const deleted = await deps.store.deleteAvatar(key.id, id);
    if (!deleted) throw avatarNotFound(id);
    // Live sessions showing it hold their own copy of the build; new sessions get 404.
    await Promise.all(
      [deleted.imageBlobId, deleted.buildBlobId, deleted.previewBlobId]
        .filter((b) => b !== null)
        .map((b) => deps.files.delete(b)),
    );
    // Its compressed atlas too: signed URLs of it now answer 404.
    await deps.atlasDelivery.forget(id);
    c.get('log').info({ avatar_id: id }, 'avatar deleted');
    return c.body(null, 204);
  });
}

async function findAvatar(c: Context<AppEnv>, deps: AppDeps): Promise<AvatarRecord> {
  const id = c.req.param('id') ?? '';
  const avatar = await deps.store.getAvatar(c.get('key').id, id);
  if (!avatar) throw avatarNotFound(id);
  return avatar;
}

function avatarNotFound(id: string): ApiError {
  return new ApiError('avatar_not_found', `No avatar \`${id}\`.`);
}

interface CreateRequest {
  name: string;
  voiceId: string | undefined;
  bytes: Uint8Array;
  /** Where the picture came from, for `error.param`. */
  param: 'image' | 'image_url';
}

/** Multipart (part `image`, fields `name`, `voice_id`) or JSON (`image_url`, fetched). */
async function readCreateRequest(c: Context<AppEnv>, deps: AppDeps): Promise<CreateRequest> {
  const contentType = c.req.header('content-type');
  if (isJsonType(contentType)) {
    const req = await parseJsonBody(c.req.raw, createAvatarRequestSchema);
    // Voices check their voice first, before fetching anything: so do avatars.
    await checkVoice(deps, c.get('key'), req.voice_id);
    const fetched = await deps.urlFetcher.fetch(req.image_url).catch((err: unknown) => {
      // The fetcher names the field `url`; here it is `image_url`.
      if (err instanceof AssetError) {
        throw new AssetError(
          err.code,
          err.message.replace('clip', 'picture'),
          'image_url',
          err.retryAfterSeconds,
        );
      }
      throw err;
    });
    return { name: req.name, voiceId: req.voice_id, bytes: fetched.bytes, param: 'image_url' };
  }
  if (mediaType(contentType) !== 'multipart/form-data') {
    throw new ApiError(
      'unsupported_media_type',
      'Send the portrait as multipart/form-data (part `image`, field `name`), or JSON `{ name, image_url }`.',
    );
  }
  const form = await readMultipartBody(c.req.raw, contentType!);
  const fields: Record<string, string> = {};
  let image: Blob | undefined;
  for (const [name, value] of form.entries()) {
    if (name === 'image') {
      if (!(value instanceof Blob)) {
        throw new ApiError('validation_failed', 'The part `image` must be a file.', {
          param: 'image',
        });
      }
      image = value;
    } else if (typeof value === 'string' && !(name in fields)) {
      fields[name] = value;
    } else {
      throw new ApiError('unknown_field', `Unexpected part \`${name}\`.`, { param: name });
    }
  }
  const parsed = parseWith(createAvatarFormSchema, fields, 'body');
  if (!image) {
    throw new ApiError(
      'validation_failed',
      'The multipart part `image` with the portrait is missing.',
      {
        param: 'image',
      },
    );
  }
  if (image.size > deps.limits.fileBytes) {
    throw new ApiError('file_too_large', `Images are limited to ${deps.limits.fileBytes} bytes.`, {
      param: 'image',
    });
  }
  return {
    name: parsed.name,
    voiceId: parsed.voice_id,
    bytes: new Uint8Array(await image.arrayBuffer()),
    param: 'image',
  };
}

/**
 * The voice asked for as the avatar's default, checked: a stock voice, or a cloned voice of this
 * key. Undefined when none was asked for (the build then picks one that fits the face).
 */
async function checkVoice(
  deps: AppDeps,
  key: ApiKeyRecord,
  voiceId: string | undefined,
): Promise<string | undefined> {
  if (voiceId === undefined) return undefined;
  if (findStockVoice(voiceId)) return voiceId;
  const voice = voiceId.startsWith(ID_PREFIXES.clonedVoice)
    ? await deps.store.getVoice(key.id, voiceId)
    : undefined;
  if (!voice) {
    throw new ApiError('voice_not_found', `No voice \`${voiceId}\`.`, { param: 'voice_id' });
  }
  return voiceId;
}
