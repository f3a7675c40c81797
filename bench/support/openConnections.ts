// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * HTTP/1.1 requests on connections opened beforehand, timed from the request's first byte
 * written to its answer's last byte read, by a client that does next to nothing: the request's
 * bytes are made before the clock starts, and the answer is read by its status line and
 * `content-length` alone. A burst's 300 requests cost `fetch` about a millisecond of the
 * machine's two cores each, which the server's figures would otherwise carry; a client's
 * keep-alive pool (a retry storm's connections) is open already, so connecting is not timed.
 */
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';

export interface RawAnswer {
  status: number;
  body: string;
  /** From the request's first byte written to the answer's last byte read. */
  ms: number;
}

/** One open connection that carries one request at a time. */
export class OpenConnection {
  private constructor(
    private readonly socket: Socket,
    private readonly host: string,
  ) {}

  static async open(url: string): Promise<OpenConnection> {
    const { hostname, port } = new URL(url);
    const socket = connect({ host: hostname, port: Number(port), noDelay: true });
    await once(socket, 'connect');
    return new OpenConnection(socket, `${hostname}:${port}`);
  }

  /** The bytes of a request, to be sent by `send` (made before the clock starts). */
  request(method: string, path: string, headers: Record<string, string>, body = ''): Buffer {
    const lines = [`${method} ${path} HTTP/1.1`, `host: ${this.host}`, 'connection: keep-alive'];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    lines.push(`content-length: ${Buffer.byteLength(body)}`);
    return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`);
  }

  send(bytes: Buffer): Promise<RawAnswer> {
    return new Promise((resolve, reject) => {
      let received = Buffer.alloc(0);
      const fail = (err: Error) => {
        this.socket.off('data', onData);
        reject(err);
      };
      const onData = (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        const headEnd = received.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const head = received.subarray(0, headEnd).toString('latin1');
        const body = bodyOf(head, received.subarray(headEnd + 4));
        if (body === undefined) return;
        const ms = performance.now() - t0;
        this.socket.off('data', onData);
        this.socket.off('error', fail);
        resolve({ status: Number(head.slice(9, 12)), body, ms });
      };
      this.socket.on('data', onData);
      this.socket.once('error', fail);
      const t0 = performance.now();
      this.socket.write(bytes);
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The whole body after `head`, by its length or its chunks; undefined while some is missing. */
function bodyOf(head: string, rest: Buffer): string | undefined {
  if (!/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
    return rest.length < length ? undefined : rest.subarray(0, length).toString('utf8');
  }
  const chunks: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = rest.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
    if (size === 0)
      return rest.indexOf('\r\n', lineEnd + 2) < 0
        ? undefined
        : Buffer.concat(chunks).toString('utf8');
    if (rest.length < lineEnd + 2 + size + 2) return undefined;
    chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
