// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './testServer.js';

let server: TestServer;
const logs: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  server = await startTestServer({ start: { log: pino({ level: 'debug' }, sink) } });
});

afterAll(async () => {
  await server?.close();
});

/** Sends raw bytes and reads the whole answer (the server closes the connection). */
function raw(request: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString()));
    socket.on('error', reject);
    socket.write(request);
  });
}

function envelopeOf(answer: string) {
  const [head, body] = answer.split('\r\n\r\n') as [string, string];
  const status = Number(head.split(' ')[1]);
  const requestId = /^x-request-id: (\S+)$/im.exec(head)?.[1];
  const parsed = JSON.parse(body) as {
    error: { type: string; code: string; message: string; request_id: string };
  };
  expect(head).toMatch(/^content-type: application\/json$/im);
  expect(parsed.error.request_id).toMatch(/^req_[0-9A-Za-z]{24}$/);
  expect(requestId).toBe(parsed.error.request_id);
  return { status, ...parsed.error };
}

describe("requests Node's HTTP parser refuses", () => {
  it('headers over 16 KB: 431 with the error envelope and a request id', async () => {
    const answer = await raw(
      `GET /v1/avatars HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(envelopeOf(answer)).toMatchObject({
      status: 431,
      type: 'invalid_request',
      code: 'headers_too_large',
    });
  });

  it('a bad request line: 400 malformed_request', async () => {
    expect(envelopeOf(await raw('THIS IS NOT HTTP\r\n\r\n'))).toMatchObject({
      status: 400,
      code: 'malformed_request',
    });
  });

  it('conflicting Content-Length headers: 400 malformed_request', async () => {
    const answer = await raw(
      'POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello',
    );
    expect(envelopeOf(answer)).toMatchObject({ status: 400, code: 'malformed_request' });
  });

  it('a client that aborts mid-body is logged as an abort, not as an unhandled 500', async () => {
    const socket = connect(server.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(
      'POST /v1/files HTTP/1.1\r\nHost: x\r\n' +
        `Authorization: Bearer ${server.secret}\r\n` +
        'Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n' +
        '--b\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF',
    );
    await sleep(300);
    socket.destroy();
    await expect
      .poll(() => logs.some((l) => l.msg === 'client aborted'), { timeout: 5_000 })
      .toBe(true);
    expect(logs.filter((l) => l.msg === 'unhandled error')).toEqual([]);
    expect(logs.filter((l) => l.msg === 'request' && l.status === 500)).toEqual([]);
  });
});
