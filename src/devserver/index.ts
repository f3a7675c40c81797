// SPDX-License-Identifier: GPL-3.0-or-later
import type { AddressInfo } from 'node:net';
import { DisconnectReason } from '@livekit/protocol';
import { pino, type Logger } from 'pino';
import { mountAgentServices, type AgentServices } from './agents/index.js';
import { HttpRouter } from './service/httpServer.js';
import { sendText } from './service/httpResponses.js';
import { newId } from './rtc/ids.js';
import { defaultNodeIp } from './nodeAddress.js';
import { RoomRegistry } from './service/roomRegistry.js';
import { RtcEndpoint } from './service/rtcEndpoint.js';
import { roomService } from './service/twirp/roomService.js';
import { TwirpServer } from './service/twirp/twirpServer.js';
import type { DynacastTimings } from './sfu/dynacast.js';

export interface DevServerOptions {
  /** TCP port for HTTP and WebSocket signalling; 0 picks a free one. Default 7880. */
  port?: number;
  /**
   * Listen address for signalling, validation and Twirp. Default `127.0.0.1`, like LiveKit's own
   * dev mode: nothing off this machine can reach it. Any other address opens it to the network
   * (logged as a warning).
   */
  host?: string;
  /**
   * API key -> secret pairs accepted in tokens. Required: there is no built-in default, so a
   * server never answers to the well-known `devkey`/`secret` by accident.
   */
  keys: Record<string, string>;
  /** Address advertised in ICE candidates. Default: the first non-loopback IPv4 address. */
  nodeIp?: string;
  /** Inclusive UDP port range for media. Default: any free port. */
  udpPortRange?: [number, number];
  /** How long a room stays open after its last participant left. Default 20 s. */
  emptyRoomTimeoutMs?: number;
  /**
   * How long a room nobody joined stays open, unless its creator set `empty_timeout`. Default
   * 300 s, like LiveKit.
   */
  unjoinedRoomTimeoutMs?: number;
  /**
   * When a publisher is told nobody watches its video (dynacast): LiveKit's 10 s after
   * publishing with no subscriber and 5 s after the last one left, unless shortened (tests).
   */
  dynacast?: DynacastTimings;
  logger?: Logger;
}

export interface DevServer {
  /** The LIVEKIT_URL clients use: `ws://<host or node address>:<port>`. */
  readonly url: string;
  /** The same server over HTTP, for RoomServiceClient and other Twirp clients. */
  readonly httpUrl: string;
  readonly port: number;
  readonly nodeIp: string;
  readonly keys: Readonly<Record<string, string>>;
  /** Every room; emits `roomCreated` / `roomClosed` (hooks for agent dispatch). */
  readonly rooms: RoomRegistry;
  /** Add HTTP routes and WebSocket endpoints (e.g. `/agent`). */
  readonly http: HttpRouter;
  /** Add Twirp services (e.g. `livekit.AgentDispatchService`). */
  readonly twirp: TwirpServer;
  /** LiveKit Agents workers (`/agent`) and their dispatch (`livekit.AgentDispatchService`). */
  readonly agents: AgentServices;
  /**
   * Cuts a participant's signal connection without a goodbye, as a network failure would;
   * the SDK then reconnects. Returns false when there is no such participant.
   */
  dropSignal(room: string, identity: string): boolean;
  close(): Promise<void>;
}

/** The address signalling binds to unless told otherwise: this machine only. */
export const DEFAULT_HOST = '127.0.0.1';

export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const log = options.logger ?? pino({ level: 'warn' });
  const keys = { ...options.keys };
  if (Object.keys(keys).length === 0) throw new Error('at least one API key is required');
  const nodeIp = options.nodeIp ?? defaultNodeIp();
  const host = options.host ?? DEFAULT_HOST;
  const nodeId = newId('ND_');

  const rooms = new RoomRegistry(
    {
      ice: { nodeIp, udpPortRange: options.udpPortRange },
      log,
      nodeId,
      dynacast: options.dynacast,
    },
    {
      emptyTimeout: (options.unjoinedRoomTimeoutMs ?? 300_000) / 1000,
      departureTimeout: (options.emptyRoomTimeoutMs ?? 20_000) / 1000,
    },
  );
  const http = new HttpRouter(log);
  const rtc = new RtcEndpoint(rooms, keys, log);
  const twirp = new TwirpServer(keys, log);
  twirp.register('livekit.RoomService', roomService(rooms));

  // Health check at exactly `/`, like LiveKit; registered first so every other route wins.
  http.route('/', async (_req, res, url) =>
    sendText(res, url.pathname === '/' ? 200 : 404, url.pathname === '/' ? 'OK' : 'not found'),
  );
  http.upgrade('/rtc', (req, socket, head, url) => rtc.upgrade(req, socket, head, url));
  http.route('/rtc/validate', (req, res, url) => rtc.validate(req, res, url));
  http.route('/twirp/', (req, res, url) => twirp.handle(req, res, url));
  const agents = mountAgentServices({ rooms, http, twirp, keys, nodeId, log });

  await new Promise<void>((resolve, reject) => {
    http.server.once('error', reject);
    http.server.listen(options.port ?? 7880, host, () => {
      http.server.off('error', reject);
      resolve();
    });
  });
  const port = (http.server.address() as AddressInfo).port;
  const wildcard = host === '0.0.0.0' || host === '::';
  const publicHost = wildcard ? nodeIp : host;
  const url = `ws://${publicHost}:${port}`;
  const httpUrl = `http://${publicHost}:${port}`;
  log.info({ url, nodeIp, keys: Object.keys(keys) }, 'LiveKit-compatible dev server listening');
  if (!isLoopback(host)) {
    log.warn(
      { host, port },
      'LiveKit signalling is open to the network: anyone who can reach this address and holds an ' +
        'API secret can join rooms (the default binds to 127.0.0.1)',
    );
  }
  if (nodeIp.startsWith('127.')) {
    log.warn({ nodeIp }, 'WebRTC clients ignore loopback addresses: set nodeIp (--node-ip)');
  }

  let closing: Promise<void> | undefined;
  return {
    url,
    httpUrl,
    port,
    nodeIp,
    keys,
    rooms,
    http,
    twirp,
    agents,
    dropSignal(roomName, identity) {
      const participant = rooms.get(roomName)?.participant(identity);
      if (!participant) return false;
      participant.signal.terminate();
      return true;
    },
    close() {
      closing ??= (async () => {
        rooms.closeAll();
        agents.close();
        rtc.close();
        http.server.closeAllConnections();
        await new Promise<void>((resolve) => http.server.close(() => resolve()));
      })();
      return closing;
    },
  };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

export { DisconnectReason };
export type { Room, RoomEvents, RoomSettings } from './rtc/room.js';
export type { Participant } from './rtc/participant.js';
export type { PublishedTrack } from './rtc/publishedTrack.js';
export { RoomRegistry, type RoomOrigin, type RoomRegistryEvents } from './service/roomRegistry.js';
export type { HttpRouter, HttpHandler, UpgradeHandler } from './service/httpServer.js';
export type { TwirpServer, TwirpService, TwirpMethod } from './service/twirp/twirpServer.js';
export { twirpMethod } from './service/twirp/twirpServer.js';
export { TwirpError } from './service/twirp/twirpError.js';
export { verifyAccessToken, tokenFromRequest, type TokenCheck } from './service/accessToken.js';
export { CORS_HEADERS, rejectUpgrade, sendBody, sendText } from './service/httpResponses.js';
export { newId } from './rtc/ids.js';
