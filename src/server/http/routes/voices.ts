// SPDX-License-Identifier: GPL-3.0-or-later
import type { Hono } from 'hono';
import {
  ENDPOINTS,
  ID_PREFIXES,
  createVoiceRequestSchema,
  listVoicesQuerySchema,
  newId,
} from '@visage-avatar/client/api';
import { findStockVoice } from '../../../media/avatarCatalogue.js';
import { ApiError } from '../apiError.js';
import { hasIdFormat } from '../pathId.js';
import { parseJsonBody, parseWith } from '../validation.js';
import { AudioDecodeError } from '../../../media/audio/index.js';
import { checkClipLength, decodeOrReject, requireSpeech } from '../../assets/voiceClip.js';
import { stockVoiceToWire, voiceToWire } from '../wireObjects.js';
import type { AppDeps, AppEnv } from './context.js';
import { honoPath } from '../honoPath.js';

export function mountVoiceRoutes(app: Hono<AppEnv>, deps: AppDeps): void {
  app.post(ENDPOINTS.createVoice.path, async (c) => {
    const req = await parseJsonBody(c.req.raw, createVoiceRequestSchema);
    if ((req.file_id === undefined) === (req.url === undefined)) {
      throw new ApiError(
        'invalid_voice_source',
        'Give exactly one of `file_id` (an uploaded clip) or `url` (a public clip).',
      );
    }
    const key = c.get('key');
    let bytes: Uint8Array;
    let contentType: string | undefined;
    if (req.file_id) {
      const file = await deps.store.getFile(key.id, req.file_id);
      if (!file) {
        throw new ApiError('file_not_found', `No file \`${req.file_id}\`.`, { param: 'file_id' });
      }
      bytes = await readFileBytes(deps, file.id);
    } else {
      const fetched = await deps.urlFetcher.fetch(req.url!);
      bytes = fetched.bytes;
      contentType = fetched.contentType ?? undefined;
    }
    const clip = await decodeOrReject(bytes, contentType, deps.limits.clipMaxMs);
    checkClipLength(clip, deps.limits);
    await requireSpeech(clip);
    const id = newId(ID_PREFIXES.clonedVoice);
    const started = performance.now();
    const { engine, profile } = await analyzeOrReject(deps, clip, bytes, req.name);
    // The row first, then the clip it owns: a refused insert leaves no orphan file behind.
    const voice = await deps.store.insertVoice({
      id,
      keyId: key.id,
      name: req.name,
      fileId: req.file_id ?? null,
      sourceUrl: req.url ?? null,
      durationMs: Math.round(clip.durationMs),
      engine,
      profile,
    });
    // The voice keeps its own copy of the clip (engines that clone from audio), so deleting the
    // uploaded file later takes nothing from the voice.
    await deps.files.put(id, bytes);
    c.get('log').info(
      { voice_id: id, engine, analysis_ms: Math.round(performance.now() - started) },
      'voice created',
    );
    return c.json(voiceToWire(voice), 201);
  });

  app.get(ENDPOINTS.listVoices.path, async (c) => {
    const q = parseWith(listVoicesQuerySchema, c.req.query(), 'query');
    const key = c.get('key');
    // The stock voices are the stock avatars' voices (the avatars are rows of the store).
    const stock = [...new Set((await deps.store.listStockAvatars()).map((a) => a.defaultVoiceId))]
      .map(findStockVoice)
      .filter((v) => v !== undefined)
      .map(stockVoiceToWire);
    // Cloned voices first (newest first), then the stock voices; the cursor spans both.
    const stockIndex = q.after ? stock.findIndex((v) => v.voice_id === q.after) : -1;
    if (stockIndex >= 0) {
      const rest = stock.slice(stockIndex + 1);
      return c.json({ data: rest.slice(0, q.limit), has_more: rest.length > q.limit });
    }
    const page = await deps.store.listVoices(key.id, q.limit, q.after);
    if (page === 'unknown_cursor') {
      throw new ApiError('validation_failed', '`after` is not a voice of this account.', {
        param: 'after',
      });
    }
    const data = page.items.map(voiceToWire);
    if (page.hasMore) return c.json({ data, has_more: true });
    const room = q.limit - data.length;
    return c.json({
      data: [...data, ...stock.slice(0, room)],
      has_more: stock.length > room,
    });
  });

  app.get(honoPath(ENDPOINTS.getVoice.path), async (c) => {
    const id = c.req.param('id');
    const stock = id === undefined ? undefined : findStockVoice(id);
    if (stock) return c.json(stockVoiceToWire(stock));
    const voice = hasIdFormat(id, ID_PREFIXES.clonedVoice)
      ? await deps.store.getVoice(c.get('key').id, id)
      : undefined;
    if (!voice) throw voiceNotFound(id);
    return c.json(voiceToWire(voice));
  });

  app.delete(honoPath(ENDPOINTS.deleteVoice.path), async (c) => {
    const id = c.req.param('id');
    if (id !== undefined && findStockVoice(id)) {
      throw new ApiError(
        'voice_not_deletable',
        `\`${id}\` is a stock voice: it ships with its avatar and cannot be deleted.`,
      );
    }
    const known =
      hasIdFormat(id, ID_PREFIXES.clonedVoice) &&
      (await deps.store.deleteVoice(c.get('key').id, id));
    if (!known) throw voiceNotFound(id);
    // Live sessions took their copy of the speaker profile when they started and keep it.
    await deps.files.delete(id);
    c.get('log').info({ voice_id: id }, 'voice deleted');
    return c.body(null, 204);
  });
}

function voiceNotFound(id: string | undefined): ApiError {
  return new ApiError('voice_not_found', `No voice \`${id ?? ''}\`.`);
}

/** The uploaded clip's bytes; a file deleted between its lookup and this read is not found. */
async function readFileBytes(deps: AppDeps, fileId: string): Promise<Uint8Array> {
  try {
    return await deps.files.get(fileId);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw new ApiError('file_not_found', `No file \`${fileId}\`.`, { param: 'file_id' });
  }
}

/** The analysis refuses a clip with too little voiced speech to measure: that is `no_speech`. */
async function analyzeOrReject(
  deps: AppDeps,
  ...args: Parameters<AppDeps['analyzeVoice']>
): ReturnType<AppDeps['analyzeVoice']> {
  try {
    return await deps.analyzeVoice(...args);
  } catch (err) {
    if (err instanceof AudioDecodeError)
      throw new ApiError('no_speech', `No usable speech: ${err.message}.`);
    throw err;
  }
}
