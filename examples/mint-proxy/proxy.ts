// A mint proxy: the small backend that holds the Visage secret key. The browser never sees the
// key: it asks this server for a session (and gets only the room URL and its participant
// token), and sends what the avatar should say through it. It also serves the page, and turns
// a photo the user picks into their own photo avatar.
//
//   VISAGE_API_KEY=sk_... npx tsx examples/mint-proxy/proxy.ts     (then open http://HOST:3000)
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { VisageApiError, VisageClient } from '../../src/client/index.js';

export interface MintProxyOptions {
  /** Default $VISAGE_API_KEY. */
  apiKey?: string;
  /** Default $VISAGE_API_URL, else http://127.0.0.1:8080. */
  apiUrl?: string;
  /** The avatar sessions are created with (default: the first of the catalogue). */
  avatarId?: string;
  host?: string;
  port?: number;
}

/** The largest photo the proxy passes on (the service's own limit). */
const MAX_PHOTO_BYTES = 20 * 1024 * 1024;

const page = readFileSync(new URL('./page.html', import.meta.url));
// The SDK's self-contained ES module build, next to its UMD build (the `require` entry).
const livekitClient = readFileSync(
  join(dirname(createRequire(import.meta.url).resolve('livekit-client')), 'livekit-client.esm.mjs'),
);

export async function startMintProxy(options: MintProxyOptions = {}) {
  const visage = new VisageClient({ apiKey: options.apiKey, baseUrl: options.apiUrl });
  const avatarId =
    options.avatarId ?? (await visage.avatars.list()).data[0]?.avatar_id ?? 'no avatar';
  /** Sessions this proxy created, so they can be driven and ended (a real app keys them by user). */
  const sessions = new Set<string>();
  /** Photo avatars this proxy made, by the picture's SHA-256: the same photo is built once. */
  const photoAvatars = new Map<string, string>();

  const routes: Record<string, (body: Record<string, unknown>) => Promise<unknown>> = {
    'POST /api/session': async (body) => {
      // The default avatar, or a photo avatar this proxy made (never an arbitrary id).
      const chosen = body.avatar_id === undefined ? avatarId : ownAvatar(body.avatar_id);
      const s = await visage.sessions.create({ avatar_id: chosen, mode: 'video' });
      sessions.add(s.session_id);
      // Only what the browser needs: never the key, nothing it could spend money with.
      return {
        session_id: s.session_id,
        livekit_url: s.livekit_url,
        participant_token: s.participant_token,
        agent_identity: s.agent_identity,
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

  function ownAvatar(id: unknown): string {
    if (typeof id !== 'string' || ![...photoAvatars.values()].includes(id)) {
      throw new HttpError(404, 'unknown avatar');
    }
    return id;
  }

  function ownSession(id: unknown): string {
    if (typeof id !== 'string' || !sessions.has(id)) throw new HttpError(404, 'unknown session');
    return id;
  }

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : errorStatus(err);
      // The service's reason (e.g. no_face_found) is safe to show; the key is never in it.
      const code = err instanceof VisageApiError ? err.code : undefined;
      const message = err instanceof Error ? err.message : String(err);
      send(res, status, 'application/json', JSON.stringify({ error: message, code }));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && path === '/') return send(res, 200, 'text/html', page);
    if (req.method === 'GET' && path === '/livekit-client.esm.mjs') {
      return send(res, 200, 'text/javascript', livekitClient);
    }
    if (req.method === 'POST' && path === '/api/avatar') {
      const avatar = await makePhotoAvatar(await readBody(req, MAX_PHOTO_BYTES));
      return send(res, 200, 'application/json', JSON.stringify(avatar));
    }
    const route = routes[`${req.method} ${path}`];
    if (!route) throw new HttpError(404, 'not found');
    const result = await route(await readJson(req));
    send(res, 200, 'application/json', JSON.stringify(result));
  }

  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 3000, options.host ?? '0.0.0.0', resolve),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? 'localhost'}:${port}`,
    sessions,
    photoAvatars,
    async close() {
      await Promise.all([...sessions].map((id) => visage.sessions.delete(id).catch(() => {})));
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function errorStatus(err: unknown): number {
  return err instanceof VisageApiError ? err.status : 500;
}

async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HttpError(413, 'the photo is over 20 MiB');
    chunks.push(chunk);
  }
  if (size === 0) throw new HttpError(400, 'no photo in the request');
  return Buffer.concat(chunks);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += chunk;
  if (!text) return {};
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new HttpError(400, 'invalid JSON');
  }
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer) {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
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
