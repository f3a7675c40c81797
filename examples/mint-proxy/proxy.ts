// SPDX-License-Identifier: Apache-2.0
// A mint proxy: the small backend that holds the Visage secret key. The browser never sees the
// key: it asks this server for a session (and gets only the room URL and its participant
// token), and sends what the avatar should say through it. It also serves the page, turns a
// photo the user picks into their own photo avatar, and a clip of their voice into a voice.
//
//   VISAGE_API_KEY=sk_... npx tsx examples/mint-proxy/proxy.ts     (then open http://HOST:3000)
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { VisageApiError, VisageClient } from '@visage-avatar/client';
import { HttpError, startPageServer, type JsonRoute } from '../shared/pageServer.js';

export interface MintProxyOptions {
  /** Default $VISAGE_API_KEY. */
  apiKey?: string;
  /** Default $VISAGE_API_URL, else http://127.0.0.1:8080. */
  apiUrl?: string;
  /** The avatar sessions start with when the page picks none (default: the first stock avatar). */
  avatarId?: string;
  host?: string;
  port?: number;
}

/** The largest photo, or voice clip, the proxy passes on (the service's own limit). */
const MAX_PHOTO_BYTES = 20 * 1024 * 1024;
const MAX_CLIP_BYTES = 20 * 1024 * 1024;

export async function startMintProxy(options: MintProxyOptions = {}) {
  const visage = new VisageClient({ apiKey: options.apiKey, baseUrl: options.apiUrl });
  // A stock avatar, not the first of the list: photo avatars come first, newest first, and the
  // newest one may be any picture anyone made with this key.
  const avatarId = options.avatarId ?? (await defaultStockAvatar(visage));
  /** Sessions this proxy created, so they can be driven and ended (a real app keys them by user). */
  const sessions = new Set<string>();
  /** Photo avatars this proxy made, by the picture's SHA-256: the same photo is built once. */
  const photoAvatars = new Map<string, string>();
  /** Voices this proxy cloned, by the clip's SHA-256: the same clip is cloned once. */
  const clonedVoices = new Map<string, string>();

  const routes: Record<string, JsonRoute> = {
    // The avatars the page may pick: the key's photo avatars and the stock ones.
    'GET /api/avatars': async () => ({
      default_avatar_id: avatarId,
      avatars: (await listAvatars(visage)).map((a) => ({
        avatar_id: a.avatar_id,
        name: a.name,
        source: a.source,
      })),
    }),
    // The voices the page may pick: the key's cloned voices and the stock ones. None picked:
    // the avatar's own (a photo avatar's fits its face).
    'GET /api/voices': async () => ({
      voices: (await listVoices(visage)).map((v) => ({
        voice_id: v.voice_id,
        name: v.name,
        source: v.source,
      })),
    }),
    'POST /api/session': async (body) => {
      // The default avatar, or one the page picked from the key's list (never an arbitrary id).
      const chosen = body.avatar_id === undefined ? avatarId : await ownAvatar(body.avatar_id);
      const voice = body.voice_id === undefined ? undefined : await ownVoice(body.voice_id);
      // `video`: the service draws the face and sends it as video. `client`: no video; the page
      // draws the face itself (@visage-avatar/web) from the avatar's `visage.face` stream.
      const mode = body.mode ?? 'video';
      if (mode !== 'video' && mode !== 'client') {
        throw new HttpError(400, "mode is 'video' or 'client'.");
      }
      const s = await visage.sessions.create({
        avatar_id: chosen,
        mode,
        ...(voice && { voice_id: voice }),
      });
      sessions.add(s.session_id);
      // Only what the browser needs: never the key, nothing it could spend money with.
      return {
        session_id: s.session_id,
        livekit_url: s.livekit_url,
        participant_token: s.participant_token,
        agent_identity: s.agent_identity,
        // `client` mode: where the page fetches the avatar's drawing material (a signed URL,
        // scoped to that avatar: not the key).
        ...(s.atlas_url !== undefined && { atlas_url: s.atlas_url }),
      };
    },
    'POST /api/speak': async (body) => {
      const id = ownSession(body.session_id);
      return visage.sessions.speak(id, String(body.text ?? ''));
    },
    'POST /api/interrupt': async (body) => visage.sessions.interrupt(ownSession(body.session_id)),
    'POST /api/end': async (body) => {
      const id = ownSession(body.session_id);
      sessions.delete(id);
      await visage.sessions.delete(id);
      return { ended: id };
    },
  };

  /** The picked photo (the request body, as the browser sent the file) becomes an avatar. */
  async function makePhotoAvatar(picture: Buffer) {
    const hash = createHash('sha256').update(picture).digest('hex');
    const known = photoAvatars.get(hash);
    if (known) return { avatar_id: known };
    const avatar = await visage.avatars.create({
      name: `Photo ${hash.slice(0, 8)}`,
      image: new Uint8Array(picture),
    });
    photoAvatars.set(hash, avatar.avatar_id);
    return { avatar_id: avatar.avatar_id };
  }

  /** The picked clip of the person's voice (the request body) becomes a cloned voice. */
  async function makeVoice(clip: Buffer) {
    const hash = createHash('sha256').update(clip).digest('hex');
    const known = clonedVoices.get(hash);
    if (known) return { voice_id: known };
    const file = await visage.files.upload(new Uint8Array(clip), 'clip');
    const voice = await visage.voices.create({
      name: `Voice ${hash.slice(0, 8)}`,
      file_id: file.file_id,
    });
    // The voice keeps working without its clip: nothing of the person is kept longer than needed.
    await visage.files.delete(file.file_id).catch(() => undefined);
    clonedVoices.set(hash, voice.voice_id);
    return { voice_id: voice.voice_id, name: voice.name };
  }

  async function ownVoice(id: unknown): Promise<string> {
    if (typeof id === 'string' && [...clonedVoices.values()].includes(id)) return id;
    const known = await listVoices(visage);
    if (typeof id !== 'string' || !known.some((v) => v.voice_id === id)) {
      throw new HttpError(
        404,
        "That voice is not one of this key's voices; pick one from the list.",
      );
    }
    return id;
  }

  async function ownAvatar(id: unknown): Promise<string> {
    if (typeof id === 'string' && [...photoAvatars.values()].includes(id)) return id;
    const known = await listAvatars(visage);
    if (typeof id !== 'string' || !known.some((a) => a.avatar_id === id)) {
      throw new HttpError(
        404,
        "That avatar is not one of this key's avatars; pick one from the list.",
      );
    }
    return id;
  }

  function ownSession(id: unknown): string {
    if (typeof id !== 'string' || !sessions.has(id)) throw new HttpError(404, 'unknown session');
    return id;
  }

  const server = await startPageServer({
    page: readFileSync(new URL('./page.html', import.meta.url)),
    routes,
    bytesRoutes: {
      // The picked photo, as the browser sent the file.
      'POST /api/avatar': { maxBytes: MAX_PHOTO_BYTES, handle: makePhotoAvatar },
      // A clip of the person speaking (WAV, MP3, Ogg, WebM, M4A, FLAC; 1 s to 5 min).
      'POST /api/voice': { maxBytes: MAX_CLIP_BYTES, handle: makeVoice },
    },
    // The service's status, message and code (e.g. no_face_found) are safe to show; the key
    // never is. The page shows the message, which says what to do.
    errorStatus: (err) => (err instanceof VisageApiError ? err.status : 500),
    errorFields: (err) => (err instanceof VisageApiError ? { code: err.code } : {}),
    host: options.host,
    port: options.port,
  });
  return {
    url: server.url,
    sessions,
    photoAvatars,
    clonedVoices,
    async close() {
      await Promise.all([...sessions].map((id) => visage.sessions.delete(id).catch(() => {})));
      await server.close();
    },
  };
}

/** Every avatar the key can use: its photo avatars (newest first), then the stock ones. */
async function listAvatars(visage: VisageClient) {
  const avatars = [];
  let after: string | undefined;
  for (;;) {
    const page = await visage.avatars.list({ limit: 100, after });
    avatars.push(...page.data);
    if (!page.has_more || page.data.length === 0) return avatars;
    after = page.data.at(-1)!.avatar_id;
  }
}

/** Every voice the key can use: its cloned voices (newest first), then the stock ones. */
async function listVoices(visage: VisageClient) {
  const voices = [];
  let after: string | undefined;
  for (;;) {
    const page = await visage.voices.list({ limit: 100, after });
    voices.push(...page.data);
    if (!page.has_more || page.data.length === 0) return voices;
    after = page.data.at(-1)!.voice_id;
  }
}

async function defaultStockAvatar(visage: VisageClient): Promise<string> {
  const stock = (await listAvatars(visage)).find((a) => a.source === 'stock');
  if (!stock) throw new Error('The service lists no stock avatar; set VISAGE_AVATAR_ID.');
  return stock.avatar_id;
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const proxy = await startMintProxy({
    host: process.env.HOST,
    port: Number(process.env.PORT ?? 3000),
    avatarId: process.env.VISAGE_AVATAR_ID,
  });
  console.log(`mint proxy on ${proxy.url} (Ctrl-C ends its sessions)`);
  process.once('SIGINT', () => void proxy.close().then(() => process.exit(0)));
}
