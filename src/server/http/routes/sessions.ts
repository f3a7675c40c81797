// SPDX-License-Identifier: GPL-3.0-or-later
import type { Context, Hono } from 'hono';
import {
  AUDIO_PAYLOAD_TYPES_TEXT,
  ENDPOINTS,
  HEADERS,
  isAudioPayloadType,
  audioFileRequestSchema,
  audioQuerySchema,
  createSessionRequestSchema,
  interruptRequestSchema,
  listSessionsQuerySchema,
  speakRequestSchema,
  waitingStateRequestSchema,
} from '@visage-avatar/client/api';
import { ApiError } from '../apiError.js';
import { honoPath } from '../honoPath.js';
import { isJsonType, mediaType, parseJsonBody, parseWith } from '../validation.js';
import { sessionToWire } from '../wireObjects.js';
import type { AppDeps, AppEnv } from './context.js';

/**
 * The signed atlas URL of an avatar (a `client` session's `atlas_url`), under the service's public
 * base URL, or the origin this request came to when none is set.
 */
function atlasUrlOf(c: Context<AppEnv>, deps: AppDeps, avatarId: string): Promise<string> {
  return deps.atlasSigner.url(deps.publicUrl ?? new URL(c.req.url).origin, avatarId);
}

export function mountSessionRoutes(app: Hono<AppEnv>, deps: AppDeps): void {
  const { sessions, limits } = deps;

  app.post(ENDPOINTS.createSession.path, async (c) => {
    const req = await parseJsonBody(c.req.raw, createSessionRequestSchema);
    // Signed before the avatar is looked up (an unknown one is refused by the create itself):
    // today's URL, and those of each later day the session may run, for its face stream.
    const atlasUrls =
      req.mode === 'client'
        ? await deps.atlasSigner.urls(
            deps.publicUrl ?? new URL(c.req.url).origin,
            req.avatar_id,
            limits.maxDurationSeconds,
          )
        : undefined;
    const atlasUrl = atlasUrls?.[0]?.url;
    const created = await sessions.create(c.get('key'), req, c.get('secretHash'), atlasUrls);
    const token = created.participantToken;
    return c.json(
      {
        ...sessionToWire(created.record),
        ...(atlasUrl !== undefined && { atlas_url: atlasUrl }),
        ...(token && {
          participant_token: token.token,
          participant_token_expires_at: token.expiresAt.toISOString(),
        }),
      },
      201,
    );
  });

  app.get(ENDPOINTS.listSessions.path, async (c) => {
    const q = parseWith(listSessionsQuerySchema, c.req.query(), 'query');
    const page = await deps.store.listSessions(c.get('key').id, q.limit, q.after, q.status);
    if (page === 'unknown_cursor') {
      throw new ApiError('validation_failed', '`after` is not a session of this account.', {
        param: 'after',
      });
    }
    return c.json({ data: page.items.map(sessionToWire), has_more: page.hasMore });
  });

  app.get(honoPath(ENDPOINTS.getSession.path), async (c) => {
    const record = await sessions.get(c.get('key'), c.req.param('id')!);
    const atlasUrl =
      record.mode === 'client' ? await atlasUrlOf(c, deps, record.avatarId) : undefined;
    return c.json({
      ...sessionToWire(record),
      ...(atlasUrl !== undefined && { atlas_url: atlasUrl }),
    });
  });

  app.post(honoPath(ENDPOINTS.speak.path), async (c) => {
    const req = await parseJsonBody(c.req.raw, speakRequestSchema);
    if ([...req.text].length > limits.speakTextChars) {
      throw new ApiError(
        'text_too_long',
        `\`text\` is limited to ${limits.speakTextChars} characters; send one call per sentence.`,
        { param: 'text' },
      );
    }
    const id = c.req.param('id')!;
    const utteranceId = await sessions.speak(c.get('key'), id, req.text);
    return c.json({ utterance_id: utteranceId, session_id: id, status: 'queued' as const }, 202);
  });

  app.post(honoPath(ENDPOINTS.audio.path), async (c) => {
    const id = c.req.param('id')!;
    const q = parseWith(audioQuerySchema, c.req.query(), 'query');
    const load = audioPayloadLoader(c, deps);
    const utteranceId = await sessions.playAudio(c.get('key'), id, load, q.text ?? null);
    return c.json({ utterance_id: utteranceId, session_id: id, status: 'queued' as const }, 202);
  });

  app.post(honoPath(ENDPOINTS.interrupt.path), async (c) => {
    await parseJsonBody(c.req.raw, interruptRequestSchema, {
      optional: true,
    });
    return c.json(await sessions.interrupt(c.get('key'), c.req.param('id')!));
  });

  app.post(honoPath(ENDPOINTS.waitingState.path), async (c) => {
    const req = await parseJsonBody(c.req.raw, waitingStateRequestSchema);
    const record = await sessions.setWaiting(c.get('key'), c.req.param('id')!, req.waiting);
    return c.json(sessionToWire(record));
  });

  app.post(honoPath(ENDPOINTS.participantToken.path), async (c) => {
    const token = await sessions.participantToken(c.get('key'), c.req.param('id')!);
    return c.json({ participant_token: token.token, expires_at: token.expiresAt.toISOString() });
  });

  app.delete(honoPath(ENDPOINTS.deleteSession.path), async (c) => {
    await sessions.delete(c.get('key'), c.req.param('id')!);
    return c.body(null, 204);
  });
}

/**
 * The audio endpoint's body: raw audio with its Content-Type, or JSON `{ file_id }`. Reading
 * happens inside the session's queue (the returned closure), keeping call order; the node that
 * plays the audio decodes it.
 */
function audioPayloadLoader(c: Context<AppEnv>, deps: AppDeps) {
  const contentType = c.req.header('content-type');
  const type = mediaType(contentType);
  if (!isJsonType(contentType) && !isAudioPayloadType(type)) {
    throw new ApiError(
      'unsupported_media_type',
      `Send audio (${AUDIO_PAYLOAD_TYPES_TEXT}) or JSON { "file_id": … }.`,
    );
  }
  return async (): Promise<{ bytes: Uint8Array; contentType: string | null }> => {
    if (isJsonType(contentType)) {
      const req = await parseJsonBody(c.req.raw, audioFileRequestSchema);
      const file = await deps.store.getFile(c.get('key').id, req.file_id);
      if (!file) {
        throw new ApiError('file_not_found', `No file \`${req.file_id}\`.`, { param: 'file_id' });
      }
      return { bytes: await deps.files.get(file.id), contentType: null };
    }
    // Bounded before this reads it (bodyLimits.ts).
    const bytes = new Uint8Array(await c.req.raw.arrayBuffer());
    return { bytes, contentType: contentType ?? null };
  };
}

/**
 * Adds the two concurrency headers to every session endpoint's answer, errors included. A
 * refusal over the cap carries them already, from the count that refused it (no second query:
 * a burst of refusals stays in memory).
 */
export async function setConcurrencyHeaders(c: Context<AppEnv>, deps: AppDeps): Promise<void> {
  const key = c.get('key');
  if (!key || c.res.headers.has(HEADERS.concurrentSessions)) return;
  const active = await deps.store.countLiveForKey(key.id);
  c.res.headers.set(HEADERS.concurrentSessions, String(active));
  c.res.headers.set(HEADERS.maxConcurrentSessions, String(key.concurrencyCap));
}
