// SPDX-License-Identifier: Apache-2.0
// The little HTTP server behind the examples' browser pages: it serves one HTML page, the
// livekit-client SDK the page imports, @visage-avatar/web (for sessions drawn in the browser), and
// a few JSON routes (the backend part that holds the secrets). Not a framework: just enough for
// an example to stay readable.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { readFileSync } from 'node:fs';

/** A JSON route: gets the parsed body, returns what is sent back as JSON. */
export type JsonRoute = (body: Record<string, unknown>) => Promise<unknown>;

/** A route that takes the raw request body (a file, say), up to `maxBytes`; answers JSON. */
export interface BytesRoute {
  maxBytes: number;
  handle(body: Buffer): Promise<unknown>;
}

export interface PageServerOptions {
  /** The page served at `/`. */
  page: Buffer | string;
  /** JSON routes by `METHOD /path`, e.g. `POST /api/session`. */
  routes: Record<string, JsonRoute>;
  /** Routes that take the raw body, by `METHOD /path`. */
  bytesRoutes?: Record<string, BytesRoute>;
  /** HTTP status of an error a route threw (default 500; HttpError carries its own). */
  errorStatus?: (err: unknown) => number;
  /** More fields for an error's JSON answer (besides `error`, its message). */
  errorFields?: (err: unknown) => Record<string, unknown>;
  host?: string;
  port?: number;
}

export interface PageServer {
  /** Where the page is, e.g. `http://localhost:3000`. */
  url: string;
  close(): Promise<void>;
}

/** An error with the HTTP status a route wants answered. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

// The SDK's self-contained ES module build, next to its UMD build (the `require` entry).
const LIVEKIT_CLIENT = readFileSync(
  join(dirname(createRequire(import.meta.url).resolve('livekit-client')), 'livekit-client.esm.mjs'),
);
const BODY_LIMIT = 64 * 1024;

let visageWeb: Promise<string> | undefined;

/**
 * @visage-avatar/web as one ES module for a page without a bundler: the package and its
 * dependencies (the face stream's format) bundled with esbuild (tsx's own, so there wherever
 * the examples run), livekit-client left an import, which the page's import map points at
 * `/livekit-client.esm.mjs`: the page and the package share one SDK. Bundled at the first request.
 */
async function bundleVisageWeb(): Promise<string> {
  const { build } = await import('esbuild');
  const result = await build({
    stdin: {
      contents: "export * from '@visage-avatar/web';",
      resolveDir: dirname(new URL(import.meta.url).pathname),
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome105', 'firefox110', 'safari16'],
    external: ['livekit-client'],
    minify: true,
    legalComments: 'eof',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

export async function startPageServer(options: PageServerOptions): Promise<PageServer> {
  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : (options.errorStatus?.(err) ?? 500);
      const error = err instanceof Error ? err.message : String(err);
      const body = { error, ...options.errorFields?.(err) };
      send(res, status, 'application/json', JSON.stringify(body));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && path === '/') return send(res, 200, 'text/html', options.page);
    if (req.method === 'GET' && path === '/livekit-client.esm.mjs') {
      return send(res, 200, 'text/javascript', LIVEKIT_CLIENT);
    }
    if (req.method === 'GET' && path === '/visage-web.mjs') {
      visageWeb ??= bundleVisageWeb();
      const script = await visageWeb.catch((err: unknown) => {
        visageWeb = undefined;
        throw err;
      });
      return send(res, 200, 'text/javascript', script);
    }
    const bytesRoute = options.bytesRoutes?.[`${req.method} ${path}`];
    if (bytesRoute) {
      const result = await bytesRoute.handle(await readBytes(req, bytesRoute.maxBytes));
      return send(res, 200, 'application/json', JSON.stringify(result ?? {}));
    }
    const route = options.routes[`${req.method} ${path}`];
    if (!route) throw new HttpError(404, 'not found');
    const result = await route(await readJson(req));
    send(res, 200, 'application/json', JSON.stringify(result ?? {}));
  }

  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 3000, options.host ?? '0.0.0.0', resolve),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? 'localhost'}:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function readBytes(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HttpError(413, `the body is over ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  if (size === 0) throw new HttpError(400, 'the request has no body');
  return Buffer.concat(chunks);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > BODY_LIMIT) throw new HttpError(413, 'body too large');
  }
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
