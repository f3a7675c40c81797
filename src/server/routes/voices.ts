import type { Hono } from 'hono';
import {
  ENDPOINTS,
  ID_PREFIXES,
  createVoiceRequestSchema,
  listQuerySchema,
  newId,
} from '../../api/index.js';
import { AVATAR_CATALOGUE } from '../../media/avatarCatalogue.js';
import { ApiError } from '../apiError.js';
import { parseJsonBody, parseWith } from '../http/validation.js';
import { checkClipLength, decodeOrReject } from '../voiceClip.js';
import { stockVoiceToWire, voiceToWire } from '../wire.js';
import type { AppDeps, AppEnv } from './context.js';

export function mountVoiceRoutes(app: Hono<AppEnv>, deps: AppDeps): void {
  app.post(ENDPOINTS.createVoice.path, async (c) => {
    const req = await parseJsonBody(c.req.raw, createVoiceRequestSchema, deps.limits.jsonBodyBytes);
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
      bytes = await deps.files.get(file.id);
    } else {
      const fetched = await deps.urlFetcher.fetch(req.url!);
      bytes = fetched.bytes;
      contentType = fetched.contentType ?? undefined;
    }
    const clip = await decodeOrReject(bytes, contentType, deps.limits.clipMaxMs);
    checkClipLength(clip, deps.limits);
    const id = newId(ID_PREFIXES.clonedVoice);
    const started = performance.now();
    const profile = await deps.analyzeVoice(clip);
    // The clip itself stays available to the media core (engines that clone from audio).
    await deps.files.put(id, bytes);
    const voice = await deps.store.insertVoice({
      id,
      keyId: key.id,
      name: req.name,
      fileId: req.file_id ?? null,
      sourceUrl: req.url ?? null,
      durationMs: Math.round(clip.durationMs),
      profile,
    });
    c.get('log').info(
      { voice_id: id, analysis_ms: Math.round(performance.now() - started) },
      'voice created',
    );
    return c.json(voiceToWire(voice), 201);
  });

  app.get(ENDPOINTS.listVoices.path, async (c) => {
    const q = parseWith(listQuerySchema, c.req.query(), 'query');
    const key = c.get('key');
    const stock = AVATAR_CATALOGUE.map((a) => stockVoiceToWire(a.defaultVoice));
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
}
