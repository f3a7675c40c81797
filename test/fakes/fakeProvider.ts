// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/** How a fake provider misbehaves, set by the test at any time. */
export interface FakeBehaviour {
  /** Delay before the first audio chunk of each utterance (the provider's own latency), ms. */
  firstChunkDelayMs: number;
  /** Delay between chunks, ms (0: as fast as possible; ~chunk length: real time). */
  chunkIntervalMs: number;
  /** Audio per chunk, ms. */
  chunkMs: number;
  /** Answer HTTP requests and socket handshakes with this status, `failTimes` times (then OK). */
  failStatus: 401 | 429 | 500 | null;
  failTimes: number;
  /** Drop the socket (no close frame) after this many chunks of an utterance. */
  dropAfterChunks: number | null;
  /** Send phoneme timestamps when asked (Cartesia; models without them send words only). */
  phonemeTimestamps: boolean;
  /**
   * Report word and phoneme timings this much later than the audio they belong to (a misaligned
   * provider): a mouth that follows the timings lags the voice by it, one that follows the audio
   * does not. Tests use it to tell the two apart.
   */
  timingsLagMs: number;
}

export const DEFAULT_BEHAVIOUR: FakeBehaviour = {
  firstChunkDelayMs: 0,
  chunkIntervalMs: 0,
  chunkMs: 100,
  failStatus: null,
  failTimes: Infinity,
  dropAfterChunks: null,
  phonemeTimestamps: true,
  timingsLagMs: 0,
};

export interface FakeRequestLog {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/**
 * The HTTP + WebSocket plumbing shared by the provider fakes: one loopback server, key check,
 * scripted failures, request log. Each fake adds its routes and socket protocol.
 */
export abstract class FakeProvider {
  readonly behaviour: FakeBehaviour = { ...DEFAULT_BEHAVIOUR };
  readonly requests: FakeRequestLog[] = [];
  readonly sockets: WebSocket[] = [];
  /** Socket handshakes accepted, with their URL. */
  readonly socketUrls: URL[] = [];
  protected readonly server: Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private failuresLeft = 0;

  /** `keyOf` reads the API key a request carries, as the provider documents it. */
  constructor(
    readonly apiKey: string,
    private readonly keyOf: (req: IncomingMessage) => string | undefined,
  ) {
    this.server = createServer((req, res) => void this.onRequest(req, res));
    // Longer than any pause in a test: a reused connection is not closed under the client.
    this.server.keepAliveTimeout = 60_000;
    this.server.on('upgrade', (req, socket, head) => {
      const refusal = this.refusal(req);
      if (refusal) {
        socket.end(
          `HTTP/1.1 ${refusal.status} Refused\r\ncontent-type: application/json\r\n` +
            `content-length: ${Buffer.byteLength(refusal.body)}\r\nconnection: close\r\n\r\n${refusal.body}`,
        );
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        this.sockets.push(ws);
        const url = new URL(req.url ?? '/', 'http://fake');
        this.socketUrls.push(url);
        this.onSocket(ws, url);
      });
    });
  }

  /** Scripted failure: the next `times` requests/handshakes answer `status`. */
  fail(status: 401 | 429 | 500, times = Infinity): void {
    this.behaviour.failStatus = status;
    this.failuresLeft = times;
  }

  heal(): void {
    this.behaviour.failStatus = null;
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  protected abstract route(req: FakeRequestLog): Promise<{ status: number; json: unknown }>;
  protected abstract onSocket(ws: WebSocket, url: URL): void;

  /** A provider's own reason to refuse a request or handshake that carries a good key. */
  protected handshakeRefusal(_req: IncomingMessage): { status: number; body: string } | undefined {
    return undefined;
  }

  protected reasonFor(status: number): string {
    return status === 401 ? 'Invalid API key' : status === 429 ? 'Too many requests' : 'Internal';
  }

  private refusal(req: IncomingMessage): { status: number; body: string } | undefined {
    if (this.behaviour.failStatus !== null && this.failuresLeft > 0) {
      this.failuresLeft--;
      const status = this.behaviour.failStatus;
      return { status, body: JSON.stringify({ detail: { message: this.reasonFor(status) } }) };
    }
    if (this.keyOf(req) !== this.apiKey) {
      return { status: 401, body: JSON.stringify({ detail: { message: 'Invalid API key' } }) };
    }
    return this.handshakeRefusal(req);
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const log: FakeRequestLog = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body: Buffer.concat(chunks),
    };
    this.requests.push(log);
    const refusal = this.refusal(req);
    let answer = refusal;
    if (!answer) {
      const r = await this.route(log);
      answer = { status: r.status, body: JSON.stringify(r.json) };
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(answer.body);
  }
}

export { sleep };

/** The parts of a multipart/form-data body: name, filename and bytes. */
export async function multipartParts(
  log: FakeRequestLog,
): Promise<{ name: string; filename: string | null; value: Buffer }[]> {
  const form = await new Response(new Uint8Array(log.body), {
    headers: { 'content-type': String(log.headers['content-type']) },
  }).formData();
  const parts: { name: string; filename: string | null; value: Buffer }[] = [];
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') parts.push({ name, filename: null, value: Buffer.from(value) });
    else parts.push({ name, filename: value.name, value: Buffer.from(await value.arrayBuffer()) });
  }
  return parts;
}
