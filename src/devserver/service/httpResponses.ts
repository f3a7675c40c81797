// SPDX-License-Identifier: GPL-3.0-or-later
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Browsers call the HTTP endpoints cross-origin (livekit-client fetches `/rtc/v1/validate`
 * before it falls back to `/rtc`), so every response allows any origin.
 */
export const CORS_HEADERS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': '*',
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
  'Access-Control-Max-Age': '600',
};

export function sendText(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    ...CORS_HEADERS,
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

export function sendBody(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: Uint8Array | string,
): void {
  res.writeHead(status, {
    ...CORS_HEADERS,
    'Content-Type': contentType,
    'Content-Length': typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength,
  });
  res.end(body);
}

/** Refuses a WebSocket upgrade with a plain HTTP response (SDKs read the status). */
export function rejectUpgrade(socket: Duplex, status: number, reason: string): void {
  const body = Buffer.from(reason);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: text/plain; charset=utf-8\r\n' +
      `Content-Length: ${body.byteLength}\r\n` +
      `Access-Control-Allow-Origin: *\r\n\r\n` +
      reason,
  );
}
