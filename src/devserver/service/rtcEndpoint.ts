// SPDX-License-Identifier: GPL-3.0-or-later
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  DisconnectReason,
  LeaveRequest,
  LeaveRequest_Action,
  ReconnectResponse,
  SignalRequest,
} from '@livekit/protocol';
import type { ClaimGrants } from 'livekit-server-sdk';
import type { Logger } from 'pino';
import WebSocket, { WebSocketServer } from 'ws';
import { tokenFromRequest, verifyAccessToken } from './accessToken.js';
import { participantKindFromToken, permissionFromGrant } from './grants.js';
import { rejectUpgrade, sendText } from './httpResponses.js';
import { newId } from '../rtc/ids.js';
import { Participant } from '../rtc/participant.js';
import { clientConfiguration } from '../rtc/joinResponse.js';
import type { Room } from '../rtc/room.js';
import { RoomRegistry } from './roomRegistry.js';
import { handleSignalRequest } from './signalHandler.js';
import { SignalConnection } from './signalConnection.js';
import { HeldSignal } from './signalSink.js';

// How long a participant whose signal connection dropped (without a leave) is kept: long enough
// for its SDK to resume it (or to replace it by a full reconnect), short enough that a vanished
// client does not linger as a ghost.
const SIGNAL_LOSS_GRACE_MS = 15_000;
// The SDK pings every 5 s (JoinResponse.ping_interval); a connection silent this long is dead.
const SIGNAL_SILENCE_LIMIT_MS = 20_000;

type Admission =
  | { ok: true; claims: ClaimGrants; identity: string; roomName: string }
  | { ok: false; status: number; reason: string };

/** `/rtc` (signal WebSocket) and `/rtc/validate` (why a connection was refused). */
export class RtcEndpoint {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly rooms: RoomRegistry;
  private readonly keys: Readonly<Record<string, string>>;
  private readonly log: Logger;

  constructor(rooms: RoomRegistry, keys: Readonly<Record<string, string>>, log: Logger) {
    this.rooms = rooms;
    this.keys = keys;
    this.log = log;
  }

  async validate(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const admission = await this.admit(req, url);
    if (admission.ok) sendText(res, 200, 'success');
    else sendText(res, admission.status, admission.reason);
  }

  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    const admission = await this.admit(req, url);
    if (!admission.ok) {
      this.log.info({ status: admission.status, reason: admission.reason }, 'signal refused');
      rejectUpgrade(socket, admission.status, admission.reason);
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, admission, url));
  }

  close(): void {
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }

  private async admit(req: IncomingMessage, url: URL): Promise<Admission> {
    const token = tokenFromRequest(req.headers.authorization, url.searchParams);
    const check = await verifyAccessToken(token, this.keys);
    if (!check.ok) return { ok: false, status: 401, reason: check.reason };
    const { claims } = check;
    const video = claims.video;
    if (!video?.roomJoin) {
      return { ok: false, status: 401, reason: 'permissions denied: roomJoin not granted' };
    }
    if (!video.room) return { ok: false, status: 401, reason: 'permissions denied: no room' };
    const identity = claims.sub;
    if (!identity) return { ok: false, status: 401, reason: 'identity cannot be empty' };
    const room = this.rooms.get(video.room);
    if (
      room &&
      url.searchParams.get('reconnect') !== '1' &&
      room.isFull() &&
      !room.participant(identity)
    ) {
      return { ok: false, status: 403, reason: 'room is full' };
    }
    return { ok: true, claims, identity, roomName: video.room };
  }

  private accept(ws: WebSocket, admission: Extract<Admission, { ok: true }>, url: URL): void {
    const { claims, identity, roomName } = admission;
    if (url.searchParams.get('reconnect') === '1') {
      this.resume(ws, admission, url.searchParams.get('sid') ?? '');
      return;
    }
    const sid = newId('PA_');
    const log = this.log.child({ room: roomName, identity, participant: sid });
    const session = new SignalConnection(ws, log);
    const room = this.rooms.getOrCreate(roomName, {
      by: 'join',
      claims,
      config: RoomRegistry.configFromClaims(claims),
    });
    const participant = new Participant(
      {
        sid,
        identity,
        name: claims.name ?? '',
        metadata: claims.metadata ?? '',
        attributes: claims.attributes ?? {},
        kind: participantKindFromToken(claims.kind),
        permission: permissionFromGrant(claims.video),
        autoSubscribe: !['0', 'false'].includes(url.searchParams.get('auto_subscribe') ?? '1'),
        claims,
        log,
      },
      session,
    );
    this.bind(ws, session, room, participant);
    room.join(participant);
  }

  /**
   * An SDK whose signal connection dropped comes back for the same participant (`sid`). Its
   * peer connections live on, so it gets ReconnectResponse and carries on; the SDK restarts
   * ICE on its publisher connection itself. Anything else (unknown sid, participant already
   * gone) is sent to a full reconnect, whose join replaces the old participant.
   */
  private resume(ws: WebSocket, admission: Extract<Admission, { ok: true }>, sid: string): void {
    const { identity, roomName } = admission;
    const room = this.rooms.get(roomName);
    const participant = room?.participant(identity);
    if (!room || !participant || participant.sid !== sid || participant.isDisconnected) {
      const log = this.log.child({ room: roomName, identity });
      log.info('cannot resume, asking for a full reconnect');
      const session = new SignalConnection(ws, log);
      session.send({
        case: 'leave',
        value: new LeaveRequest({
          canReconnect: true,
          reason: DisconnectReason.STATE_MISMATCH,
          action: LeaveRequest_Action.RECONNECT,
        }),
      });
      session.close();
      return;
    }
    participant.log.info('signal connection resumed');
    const previous = participant.signal;
    const held = previous instanceof HeldSignal ? previous.take() : [];
    const session = new SignalConnection(ws, participant.log);
    participant.signal = session;
    participant.signalLostAt = undefined;
    previous.close();
    this.bind(ws, session, room, participant);
    session.send({
      case: 'reconnect',
      value: new ReconnectResponse({
        iceServers: [],
        clientConfiguration: clientConfiguration(),
      }),
    });
    // What the server sent while the signal was lost (ICE candidates above all) follows.
    for (const message of held) session.send(message);
    room.resync(participant);
  }

  /** Routes a session's requests to its participant, and notices when the session ends. */
  private bind(
    ws: WebSocket,
    session: SignalConnection,
    room: Room,
    participant: Participant,
  ): void {
    let lastMessageAt = Date.now();
    let queue: Promise<void> = Promise.resolve();
    const hooks = { dropSignal: () => session.terminate() };
    ws.on('message', (data, isBinary) => {
      lastMessageAt = Date.now();
      if (!isBinary) return;
      let request: SignalRequest;
      try {
        request = SignalRequest.fromBinary(toBuffer(data));
      } catch (err) {
        participant.log.debug({ err }, 'undecodable signal message');
        return;
      }
      queue = queue
        .then(() => handleSignalRequest(room, participant, request, hooks))
        .catch((err: unknown) =>
          participant.log.warn({ err, request: request.message.case }, 'signal error'),
        );
    });
    const silence = setInterval(() => {
      if (Date.now() - lastMessageAt > SIGNAL_SILENCE_LIMIT_MS) session.terminate();
    }, 5_000);
    silence.unref();
    ws.on('close', () => {
      clearInterval(silence);
      this.onSignalClosed(room, participant, session);
    });
    ws.on('error', (err) => participant.log.debug({ err }, 'signal socket error'));
  }

  private onSignalClosed(room: Room, participant: Participant, session: SignalConnection): void {
    // A session replaced by a resume, or a participant already gone, needs nothing.
    if (room.participant(participant.identity) !== participant) return;
    if (participant.signal !== session) return;
    participant.log.info('signal connection lost');
    participant.signal = new HeldSignal();
    const lostAt = Date.now();
    participant.signalLostAt = lostAt;
    setTimeout(() => {
      if (
        room.participant(participant.identity) === participant &&
        participant.signalLostAt === lostAt
      ) {
        room.remove(participant, DisconnectReason.SIGNAL_CLOSE);
      }
    }, SIGNAL_LOSS_GRACE_MS).unref();
  }
}

function toBuffer(data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
