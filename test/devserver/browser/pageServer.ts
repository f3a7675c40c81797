// SPDX-License-Identifier: GPL-3.0-or-later
// Serves the browser test's page: `page.ts` bundled with livekit-client by esbuild (an IIFE, built
// at test time) and an HTML page that loads it, on the namespace address.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const PAGE_ENTRY = fileURLToPath(new URL('./page.ts', import.meta.url));

const HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>visage browser test</title>
<style>body{margin:0;background:#808080}</style></head>
<body><script src="/page.js"></script></body></html>`;

export interface PageServer {
  /** The page's origin, e.g. `http://10.213.0.1:41234`. */
  origin: string;
  close(): Promise<void>;
}

export async function bundlePage(): Promise<string> {
  const result = await build({
    entryPoints: [PAGE_ENTRY],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome110',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

export async function startPageServer(address: string): Promise<PageServer> {
  const script = await bundlePage();
  const server: Server = createServer((req, res) => {
    if (req.url === '/' || req.url === '/index.html') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(HTML);
    } else if (req.url === '/page.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' });
      res.end(script);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${address}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
