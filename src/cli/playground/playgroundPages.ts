// SPDX-License-Identifier: GPL-3.0-or-later
// `visage dev`'s playground: a page where a developer joins a room of the embedded LiveKit server,
// their agent worker is dispatched into it with its avatar, and they talk to it (see
// docs/playground.md). Mounted beside the API by devNode.ts only; `visage serve` has no such page.
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { PLAYGROUND_HTML } from './playgroundPage.js';
import { loadPlaygroundScript } from './playgroundScript.js';
import { playgroundToken, type PlaygroundLiveKit } from './playgroundToken.js';

export const PLAYGROUND_PATH = '/playground';

export interface PlaygroundOptions {
  /** The embedded LiveKit server (still starting while the node starts). */
  livekit: Promise<PlaygroundLiveKit>;
}

/** An agent name as agents-js takes it; bounded, and plain enough to echo in a log. */
const TokenRequest = z
  .object({
    agent: z
      .string()
      .max(128)
      .regex(/^[A-Za-z0-9._:-]*$/, 'letters, digits and . _ : - only')
      .optional(),
    /** The avatar drawn on the server (`video`) or in the browser (`client`). */
    face: z.enum(['video', 'client']).optional(),
  })
  .strict();

const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'unsafe-inline'",
  // The embedded LiveKit server is another origin (its own port): signalling and its
  // validation request.
  "connect-src 'self' ws: wss: http: https:",
  'media-src blob: mediastream:',
  "img-src 'self' data:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const NO_STORE = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

/**
 * Whether a request's Host is this machine as a browser names it directly: an IP address or
 * `localhost`. A DNS-rebinding page (a name of the attacker's, pointed at 127.0.0.1) sends its
 * own name, and is refused: it could otherwise read tokens for the embedded LiveKit.
 */
export function isDirectHost(host: string | undefined): boolean {
  if (!host) return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    return false;
  }
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) return true;
  return ipaddr.isValid(hostname.replace(/^\[(.*)\]$/, '$1'));
}

function refuse(c: Context, status: 400 | 403 | 415, error: string) {
  return c.json({ error }, status, NO_STORE);
}

/** The playground's routes, to mount at PLAYGROUND_PATH: the page, its script, its tokens. */
export function playgroundPages(options: PlaygroundOptions): { path: string; app: Hono } {
  const app = new Hono();
  let script: Promise<string> | undefined;

  app.use(async (c, next) => {
    if (!isDirectHost(c.req.header('host'))) {
      return refuse(c, 403, 'open the playground at this machine address (127.0.0.1, localhost)');
    }
    return next();
  });

  app.get('/', (c) =>
    c.html(PLAYGROUND_HTML, 200, { ...NO_STORE, 'content-security-policy': PAGE_POLICY }),
  );

  app.get('/playground.js', async (c) => {
    script ??= loadPlaygroundScript();
    const text = await script.catch((err: unknown) => {
      script = undefined;
      throw err;
    });
    return c.body(text, 200, { ...NO_STORE, 'content-type': 'text/javascript; charset=utf-8' });
  });

  const limit = bodyLimit({
    maxSize: 1024,
    onError: (c) => c.json({ error: 'the body is over 1024 bytes' }, 413, NO_STORE),
  });
  app.post('/token', limit, async (c) => {
    // A JSON body: a cross-origin page cannot send one without a CORS preflight, which this
    // server never grants; and a browser's Origin, when sent, is the page's own.
    if (!(c.req.header('content-type') ?? '').startsWith('application/json')) {
      return refuse(c, 415, 'send a JSON body (content-type: application/json)');
    }
    const origin = c.req.header('origin');
    if (origin !== undefined && origin !== `http://${c.req.header('host')}`) {
      return refuse(c, 403, 'tokens are for the playground page itself');
    }
    const text = await c.req.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : {};
    } catch {
      return refuse(c, 400, 'the body is not JSON');
    }
    const parsed = TokenRequest.safeParse(body);
    if (!parsed.success) {
      return refuse(c, 400, `invalid request: ${parsed.error.issues[0]?.message ?? 'bad body'}`);
    }
    const token = await playgroundToken(
      await options.livekit,
      parsed.data.agent || undefined,
      parsed.data.face,
    );
    return c.json(token, 200, NO_STORE);
  });

  return { path: PLAYGROUND_PATH, app };
}
