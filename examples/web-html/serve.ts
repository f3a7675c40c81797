// SPDX-License-Identifier: Apache-2.0
// A static server for index.html, for trying the example in a checkout of this repository: it
// serves the page at `/` and, under `/node_modules/`, the built files of the packages the page's
// import map names, found as Node finds them from here. Any static server does the same for a
// page that sits beside its node_modules; this one serves nothing else.
import { createServer } from 'node:http';
import { readFile, realpath, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const PACKAGES = ['livekit-client', '@visage-avatar/web'];
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.map': 'application/json',
};

/** A package's folder, looked up in node_modules from this folder upward (as Node does). */
async function packageDir(name: string): Promise<string> {
  for (let dir = HERE; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (await stat(join(candidate, 'package.json')).catch(() => undefined)) {
      return realpath(candidate);
    }
    if (dirname(dir) === dir) throw new Error(`${name} is not installed: npm install ${name}`);
  }
}

const dirs = new Map(
  await Promise.all(PACKAGES.map(async (name) => [name, await packageDir(name)] as const)),
);

/** The file a request path names, or undefined (outside the page and those packages). */
async function fileOf(path: string): Promise<string | undefined> {
  if (path === '/' || path === '/index.html') return join(HERE, 'index.html');
  for (const [name, dir] of dirs) {
    const prefix = `/node_modules/${name}/`;
    if (!path.startsWith(prefix)) continue;
    const file = await realpath(
      resolve(dir, `.${decodeURIComponent(path.slice(prefix.length - 1))}`),
    ).catch(() => undefined);
    return file?.startsWith(dir + sep) ? file : undefined;
  }
  return undefined;
}

const server = createServer((req, res) => {
  void (async () => {
    const file = await fileOf(new URL(req.url ?? '/', 'http://x').pathname);
    const type = file && TYPES[extname(file)];
    if (req.method !== 'GET' || !file || !type) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': type }).end(await readFile(file));
  })().catch(() => (res.headersSent ? res.destroy() : res.writeHead(500).end()));
});

const host = process.env.HOST ?? '127.0.0.1';
server.listen(Number(process.env.PORT ?? 3000), host, () => {
  const { port } = server.address() as AddressInfo;
  console.log(`web-html example on http://${host}:${port}/`);
});
