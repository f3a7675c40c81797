// SPDX-License-Identifier: GPL-3.0-or-later
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { CORS_HEADERS, rejectUpgrade, sendText } from './httpResponses.js';

export type HttpHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;
export type UpgradeHandler = (
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  url: URL,
) => Promise<void>;

/**
 * The server's single HTTP listener: routes by path prefix to request and WebSocket-upgrade
 * handlers, answers CORS preflights, and 404s what nobody claimed (which is how SDKs learn that
 * `/rtc/v1` is not spoken here and fall back to `/rtc`).
 */
export class HttpRouter {
  readonly server: Server;
  private readonly routes: { prefix: string; handler: HttpHandler }[] = [];
  private readonly upgrades: { path: string; handler: UpgradeHandler }[] = [];
  private readonly log: Logger;

  constructor(log: Logger) {
    this.log = log;
    this.server = createServer((req, res) => void this.onRequest(req, res));
    this.server.on('upgrade', (req, socket, head) => void this.onUpgrade(req, socket, head));
  }

  /** Handles requests whose path equals `prefix` or starts with it. Later routes win ties. */
  route(prefix: string, handler: HttpHandler): void {
    this.routes.unshift({ prefix, handler });
  }

  /** Handles WebSocket upgrades at exactly `path`. */
  upgrade(path: string, handler: UpgradeHandler): void {
    this.upgrades.unshift({ path, handler });
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://devserver');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, CORS_HEADERS);
      res.end();
      return;
    }
    const route = this.routes.find(
      (r) => url.pathname === r.prefix || url.pathname.startsWith(r.prefix),
    );
    try {
      if (route) await route.handler(req, res, url);
      else sendText(res, 404, 'not found');
    } catch (err) {
      this.log.error({ err, path: url.pathname }, 'http handler failed');
      if (!res.headersSent) sendText(res, 500, 'internal error');
      else res.destroy();
    }
  }

  private async onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://devserver');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const entry = this.upgrades.find((u) => u.path === path);
    socket.on('error', (err) => this.log.debug({ err }, 'upgrade socket error'));
    try {
      if (entry) await entry.handler(req, socket, head, url);
      else rejectUpgrade(socket, 404, 'not found');
    } catch (err) {
      this.log.error({ err, path }, 'upgrade handler failed');
      rejectUpgrade(socket, 500, 'internal error');
    }
  }
}
