// SPDX-License-Identifier: GPL-3.0-or-later
import type { Hono } from 'hono';
import {
  ENDPOINTS,
  ID_PREFIXES,
  lineText,
  listQuerySchema,
  newId,
} from '@visage-avatar/client/api';
import { ApiError } from '../apiError.js';
import { readMultipartBody } from '../multipartBody.js';
import { hasIdFormat } from '../pathId.js';
import { mediaType, parseWith } from '../validation.js';
import { checkClipLength, contentTypeOf, decodeOrReject } from '../../assets/voiceClip.js';
import { fileToWire } from '../wireObjects.js';
import type { AppDeps, AppEnv } from './context.js';
import { honoPath } from '../honoPath.js';

/** Multipart framing around the clip: boundaries and part headers stay well under this. */

export function mountFileRoutes(app: Hono<AppEnv>, deps: AppDeps): void {
  app.post(ENDPOINTS.uploadFile.path, async (c) => {
    const contentType = c.req.header('content-type');
    if (mediaType(contentType) !== 'multipart/form-data') {
      throw new ApiError(
        'unsupported_media_type',
        'Upload the clip as multipart/form-data with a part named `file`.',
      );
    }
    const form = await readMultipartBody(c.req.raw, contentType!);
    for (const name of form.keys()) {
      if (name !== 'file') {
        throw new ApiError('unknown_field', `Unknown part \`${name}\`: send only \`file\`.`, {
          param: name,
        });
      }
    }
    const part = form.get('file');
    if (!(part instanceof Blob)) {
      throw new ApiError(
        'validation_failed',
        'The multipart part `file` with the clip is missing.',
        {
          param: 'file',
        },
      );
    }
    if (part.size > deps.limits.fileBytes) {
      throw new ApiError('file_too_large', `Files are limited to ${deps.limits.fileBytes} bytes.`, {
        param: 'file',
      });
    }
    const bytes = new Uint8Array(await part.arrayBuffer());
    const clip = await decodeOrReject(bytes, part.type || undefined, deps.limits.clipMaxMs);
    checkClipLength(clip, deps.limits);
    const key = c.get('key');
    const id = newId(ID_PREFIXES.file);
    const filename = (part instanceof File && part.name) || 'clip';
    if (!lineText().safeParse(filename).success) {
      throw new ApiError(
        'validation_failed',
        'The file name must not contain control characters.',
        {
          param: 'file',
        },
      );
    }
    const record = await deps.store.insertFile({
      id,
      keyId: key.id,
      filename: filename.slice(0, 255),
      contentType: contentTypeOf(clip.format),
      bytes: bytes.byteLength,
      durationMs: Math.round(clip.durationMs),
      format: clip.format,
    });
    // The row first, then the bytes it owns: a refused insert leaves no orphan file behind.
    await deps.files.put(id, bytes);
    c.get('log').info({ file_id: id, bytes: bytes.byteLength, format: clip.format }, 'file stored');
    return c.json(fileToWire(record), 201);
  });

  app.get(ENDPOINTS.listFiles.path, async (c) => {
    const q = parseWith(listQuerySchema, c.req.query(), 'query');
    const page = await deps.store.listFiles(c.get('key').id, q.limit, q.after);
    if (page === 'unknown_cursor') {
      throw new ApiError('validation_failed', '`after` is not a file of this account.', {
        param: 'after',
      });
    }
    return c.json({ data: page.items.map(fileToWire), has_more: page.hasMore });
  });

  app.get(honoPath(ENDPOINTS.getFile.path), async (c) => {
    const id = c.req.param('id');
    const file = hasIdFormat(id, ID_PREFIXES.file)
      ? await deps.store.getFile(c.get('key').id, id)
      : undefined;
    if (!file) throw fileNotFound(id);
    return c.json(fileToWire(file));
  });

  app.delete(honoPath(ENDPOINTS.deleteFile.path), async (c) => {
    const id = c.req.param('id');
    const known =
      hasIdFormat(id, ID_PREFIXES.file) && (await deps.store.deleteFile(c.get('key').id, id));
    if (!known) throw fileNotFound(id);
    // Voices made from the file keep their own copy of the clip, so nothing else refers to it.
    await deps.files.delete(id);
    c.get('log').info({ file_id: id }, 'file deleted');
    return c.body(null, 204);
  });
}

function fileNotFound(id: string | undefined): ApiError {
  return new ApiError('file_not_found', `No file \`${id ?? ''}\`.`);
}
