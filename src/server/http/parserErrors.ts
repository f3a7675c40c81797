// SPDX-License-Identifier: GPL-3.0-or-later
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { ERROR_CODES, HEADERS, ID_PREFIXES, newId } from '@visage-avatar/client/api';

/**
 * Requests Node's HTTP parser refuses never reach the app (headers over the size limit, a bad
 * request line, conflicting lengths): Node's default answer is an empty 400. This answers them
 * with the API's error envelope and a request id instead, and treats a client that went away as
 * an abort, not an error.
 */
export function answerParserErrors(server: Server, log: Logger): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      log.debug({ code: err.code }, 'client went away before its request was read');
      socket.destroy();
      return;
    }
    const requestId = newId(ID_PREFIXES.request);
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const code = tooLarge ? 'headers_too_large' : 'malformed_request';
    const { status, type } = ERROR_CODES[code];
    const message = tooLarge
      ? 'The request headers are too large.'
      : 'The request could not be parsed as HTTP/1.1.';
    log.info({ request_id: requestId, status, code: err.code }, 'request refused by the parser');
    const body = JSON.stringify({ error: { type, code, message, request_id: requestId } });
    socket.end(
      `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        'content-type: application/json\r\n' +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        `${HEADERS.requestId}: ${requestId}\r\n` +
        'connection: close\r\n\r\n' +
        body,
    );
  });
}
