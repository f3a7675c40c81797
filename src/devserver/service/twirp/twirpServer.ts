// SPDX-License-Identifier: GPL-3.0-or-later
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClaimGrants } from 'livekit-server-sdk';
import type { Logger } from 'pino';
import { tokenFromRequest, verifyAccessToken } from '../accessToken.js';
import { sendBody } from '../httpResponses.js';
import { TwirpError } from './twirpError.js';

/** The protobuf-es (v1) message surface Twirp needs, without depending on protobuf-es itself. */
export interface WireMessage {
  toBinary(): Uint8Array;
  toJsonString(options?: { emitDefaultValues?: boolean }): string;
}

export interface MessageCodec<T> {
  fromBinary(bytes: Uint8Array): T;
  fromJsonString(json: string, options?: { ignoreUnknownFields?: boolean }): T;
}

export interface TwirpMethod<Req> {
  request: MessageCodec<Req>;
  handle(request: Req, claims: ClaimGrants): WireMessage | Promise<WireMessage>;
}

export type TwirpService = Record<string, TwirpMethod<never>>;

/** Declares a method with its request type checked against the handler. */
export function twirpMethod<Req>(
  request: MessageCodec<Req>,
  handle: (request: Req, claims: ClaimGrants) => WireMessage | Promise<WireMessage>,
): TwirpMethod<never> {
  return { request, handle } as unknown as TwirpMethod<never>;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Serves `/twirp/<package.Service>/<Method>` for the registered services, in JSON or protobuf
 * as the request's Content-Type says, with Twirp's error format.
 */
export class TwirpServer {
  private readonly services = new Map<string, TwirpService>();
  private readonly keys: Readonly<Record<string, string>>;
  private readonly log: Logger;

  constructor(keys: Readonly<Record<string, string>>, log: Logger) {
    this.keys = keys;
    this.log = log;
  }

  /** `name` is the fully qualified service, e.g. `livekit.RoomService`. */
  register(name: string, service: TwirpService): void {
    this.services.set(name, service);
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const protobuf = (req.headers['content-type'] ?? '').startsWith('application/protobuf');
    try {
      const [, , serviceName = '', methodName = ''] = url.pathname.split('/');
      const method = this.services.get(serviceName)?.[methodName];
      if (req.method !== 'POST' || !method) {
        throw new TwirpError('bad_route', `no handler for ${req.method} ${url.pathname}`);
      }
      const token = tokenFromRequest(req.headers.authorization, new URLSearchParams());
      const check = await verifyAccessToken(token, this.keys);
      if (!check.ok) throw new TwirpError('unauthenticated', check.reason);
      const body = await readBody(req);
      let request: never;
      try {
        request = protobuf
          ? method.request.fromBinary(body)
          : method.request.fromJsonString(body.toString('utf8') || '{}', {
              ignoreUnknownFields: true,
            });
      } catch (err) {
        throw new TwirpError('malformed', `cannot decode request: ${(err as Error).message}`);
      }
      const response = await method.handle(request, check.claims);
      if (protobuf) sendBody(res, 200, 'application/protobuf', response.toBinary());
      else sendBody(res, 200, 'application/json', response.toJsonString());
    } catch (err) {
      const twirpError =
        err instanceof TwirpError ? err : new TwirpError('internal', (err as Error).message);
      if (!(err instanceof TwirpError)) this.log.error({ err }, 'twirp handler failed');
      sendBody(res, twirpError.status, 'application/json', twirpError.toJson());
    }
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new TwirpError('invalid_argument', 'request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
