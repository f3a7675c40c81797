// SPDX-License-Identifier: GPL-3.0-or-later
// HTTP and signalling behaviour that needs no WebRTC: runs anywhere, on loopback.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DisconnectReason,
  JoinResponse,
  Ping,
  SignalRequest,
  SignalResponse,
  TrickleRequest,
} from '@livekit/protocol';
import type { RoomOrigin } from '../../src/devserver/index.js';
// The token carries livekit-server-sdk's own protocol copy; the server reads it as JSON.
import {
  AccessToken,
  RoomAgentDispatch,
  RoomConfiguration,
  RoomServiceClient,
} from 'livekit-server-sdk';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevServer, type DevServer } from '../../src/devserver/index.js';
import { upgradeStatus, waitForMessage } from './rawSignal.js';

const KEY = 'devkey';
const SECRET = 'http-test-secret-0123456789';

async function joinToken(
  room: string,
  identity: string,
  secret = SECRET,
  kind?: 'agent',
  canSubscribe = true,
) {
  const at = new AccessToken(KEY, secret, { identity });
  if (kind) at.kind = kind;
  at.addGrant({ room, roomJoin: true, canSubscribe });
  return at.toJwt();
}

describe('dev server HTTP endpoints and signalling', () => {
  let server: DevServer;
  let base: string;

  beforeAll(async () => {
    server = await startDevServer({
      port: 0,
      host: '127.0.0.1',
      nodeIp: '127.0.0.1',
      keys: { [KEY]: SECRET },
      logger: pino({ level: 'silent' }),
    });
    base = `127.0.0.1:${server.port}`;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('reports its URLs and the keys it was given', () => {
    expect(server.url).toBe(`ws://${base}`);
    expect(server.httpUrl).toBe(`http://${base}`);
    expect(server.keys).toEqual({ [KEY]: SECRET });
  });

  it('binds signalling to loopback unless told otherwise, and has no default key', async () => {
    const local = await startDevServer({
      port: 0,
      nodeIp: '127.0.0.1',
      keys: { [KEY]: SECRET },
      logger: pino({ level: 'silent' }),
    });
    try {
      expect(local.http.server.address()).toMatchObject({ address: '127.0.0.1' });
      expect(local.url).toBe(`ws://127.0.0.1:${local.port}`);
      // The well-known dev pair is refused: only the configured secret signs tokens here.
      const wellKnown = new AccessToken('devkey', 'secret', { identity: 'x' });
      wellKnown.addGrant({ room: 'r', roomJoin: true });
      const refused = await fetch(
        `${local.httpUrl}/rtc/validate?access_token=${await wellKnown.toJwt()}`,
      );
      expect(refused.status).toBe(401);
    } finally {
      await local.close();
    }
    await expect(
      startDevServer({ port: 0, keys: {}, logger: pino({ level: 'silent' }) }),
    ).rejects.toThrow(/API key/);
  });

  it('answers /rtc/v1 and /rtc/v1/validate with 404 so SDKs fall back to /rtc', async () => {
    const upgrade = await upgradeStatus(`ws://${base}/rtc/v1?join_request=x`);
    expect(upgrade.status).toBe(404);
    const validate = await fetch(`http://${base}/rtc/v1/validate?access_token=x`);
    expect(validate.status).toBe(404);
    expect(validate.headers.get('access-control-allow-origin')).toBe('*');
    // livekit-client treats this phrase as a different error and would not fall back.
    expect(await validate.text()).not.toContain('requested room does not exist');
  });

  it('validates tokens from the header or the access_token query, giving the reason', async () => {
    const good = await joinToken('r', 'alice');
    const viaHeader = await fetch(`http://${base}/rtc/validate`, {
      headers: { Authorization: `Bearer ${good}` },
    });
    expect(viaHeader.status).toBe(200);
    const viaQuery = await fetch(`http://${base}/rtc/validate?access_token=${good}`);
    expect(viaQuery.status).toBe(200);
    expect(viaQuery.headers.get('access-control-allow-origin')).toBe('*');

    const bad = await fetch(
      `http://${base}/rtc/validate?access_token=${await joinToken('r', 'a', 'x')}`,
    );
    expect(bad.status).toBe(401);
    expect(await bad.text()).toMatch(/invalid token/);
    const missing = await fetch(`http://${base}/rtc/validate`);
    expect(missing.status).toBe(401);
    expect(await missing.text()).toMatch(/no authorization token/);
    const at = new AccessToken('unknown-key', SECRET, { identity: 'a' });
    at.addGrant({ room: 'r', roomJoin: true });
    const unknownKey = await fetch(`http://${base}/rtc/validate?access_token=${await at.toJwt()}`);
    expect(await unknownKey.text()).toMatch(/unknown API key/);
  });

  it('answers a health check at / and 404 elsewhere', async () => {
    const health = await fetch(`http://${base}/`);
    expect(health.status).toBe(200);
    expect(await health.text()).toBe('OK');
    expect((await fetch(`http://${base}/nothing/here`)).status).toBe(404);
  });

  it('answers CORS preflights', async () => {
    const response = await fetch(`http://${base}/twirp/livekit.RoomService/ListRooms`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://example.test', 'Access-Control-Request-Method': 'POST' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-headers')).toBe('*');
  });

  it('refuses a bad token with HTTP 401 at the upgrade', async () => {
    const refused = await upgradeStatus(`ws://${base}/rtc`, {
      Authorization: `Bearer ${await joinToken('r', 'alice', 'wrong')}`,
    });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatch(/invalid token/);
  });

  it('tells agents that may publish, and only them, to publish fast (negotiate at once)', async () => {
    const joinOf = async (identity: string, kind?: 'agent') => {
      const token = await joinToken('fast-room', identity, SECRET, kind);
      const { ws, messages } = await upgradeStatus(`ws://${base}/rtc?access_token=${token}`);
      const join = (await waitForMessage(messages, 'join')) as JoinResponse;
      ws!.close();
      return join;
    };
    expect((await joinOf('an-agent', 'agent')).fastPublish).toBe(true);
    expect((await joinOf('a-person')).fastPublish).toBe(false);
  });

  it('makes the publisher connection primary for a participant that cannot subscribe, as LiveKit', async () => {
    const token = await joinToken('primary-room', 'publish-only', SECRET, 'agent', false);
    const { ws, messages } = await upgradeStatus(`ws://${base}/rtc?access_token=${token}`);
    const join = (await waitForMessage(messages, 'join')) as JoinResponse;
    ws!.close();
    // The SDK then waits for its publisher connection alone, negotiated at join.
    expect(join.subscriberPrimary).toBe(false);
    expect(join.fastPublish).toBe(true);
  });

  it('sends a JoinResponse with non-zero ping settings and answers pings', async () => {
    const { status, ws, messages } = await upgradeStatus(
      `ws://${base}/rtc?access_token=${await joinToken('ping-room', 'pinger')}&auto_subscribe=1`,
    );
    expect(status).toBe(101);
    const waitFor = (kind: SignalResponse['message']['case']) => waitForMessage(messages, kind);
    const join = (await waitFor('join')) as JoinResponse;
    expect(join.pingInterval).toBeGreaterThan(0);
    expect(join.pingTimeout).toBeGreaterThan(join.pingInterval);
    expect(join.subscriberPrimary).toBe(true);
    expect(join.room?.name).toBe('ping-room');
    expect(join.participant?.identity).toBe('pinger');
    expect(join.participant?.sid).toMatch(/^PA_/);
    // The subscriber offer (data channels) follows the JoinResponse.
    const offer = (await waitFor('offer')) as { sdp: string };
    expect(offer.sdp).toContain('m=application');

    ws!.send(
      new SignalRequest({
        message: { case: 'pingReq', value: new Ping({ timestamp: 42n }) },
      }).toBinary(),
    );
    ws!.send(new SignalRequest({ message: { case: 'ping', value: 7n } }).toBinary());
    const pong = (await waitFor('pongResp')) as { lastPingTimestamp: bigint };
    expect(pong.lastPingTimestamp).toBe(42n);
    expect(await waitFor('pong')).toBeTypeOf('bigint');

    ws!.send(new SignalRequest({ message: { case: 'leave', value: {} as never } }).toBinary());
    await new Promise<void>((resolve) => ws!.on('close', () => resolve()));
    expect(server.rooms.get('ping-room')?.participant('pinger')).toBeUndefined();
  });

  it('keeps what it sends while a signal is lost and delivers it to the resumed connection', async () => {
    // An ICE candidate gathered while the SDK's signal is down must reach it after the resume,
    // or a peer connection still connecting when the signal dropped never connects.
    const token = await joinToken('held-room', 'holder');
    const first = await upgradeStatus(`ws://${base}/rtc?access_token=${token}`);
    const join = (await waitForMessage(first.messages, 'join')) as JoinResponse;
    const sid = join.participant!.sid;
    expect(server.dropSignal('held-room', 'holder')).toBe(true);
    const holder = server.rooms.get('held-room')!.participant('holder')!;
    const deadline = Date.now() + 5_000;
    while (holder.signalLostAt === undefined && Date.now() < deadline) {
      await sleep(20);
    }
    expect(holder.signalLostAt).toBeDefined();
    const candidateInit = JSON.stringify({ candidate: 'candidate:1 1 udp 1 10.0.0.1 9 typ host' });
    holder.send({ case: 'trickle', value: new TrickleRequest({ candidateInit, target: 1 }) });

    const resumed = await upgradeStatus(
      `ws://${base}/rtc?access_token=${token}&reconnect=1&sid=${sid}`,
    );
    expect(resumed.status).toBe(101);
    try {
      await waitForMessage(resumed.messages, 'trickle');
      const kinds = resumed.messages.map((m) => m.message.case);
      expect(kinds.indexOf('reconnect')).toBeLessThan(kinds.indexOf('trickle'));
      const trickle = (await waitForMessage(resumed.messages, 'trickle')) as TrickleRequest;
      expect(trickle.candidateInit).toBe(candidateInit);
      expect(server.rooms.get('held-room')?.participant('holder')?.sid).toBe(sid);
    } finally {
      resumed.ws?.close();
    }
  });

  it('creates a room on first join with the room configuration in the token (dispatch hook)', async () => {
    const origins: RoomOrigin[] = [];
    server.rooms.on('roomCreated', (_room, origin) => origins.push(origin));
    const at = new AccessToken(KEY, SECRET, { identity: 'creator', attributes: { a: 'b' } });
    at.addGrant({ room: 'configured-room', roomJoin: true });
    at.roomConfig = new RoomConfiguration({
      maxParticipants: 3,
      departureTimeout: 7,
      agents: [new RoomAgentDispatch({ agentName: 'avatar-agent', metadata: '{"x":1}' })],
    });
    const { status, ws } = await upgradeStatus(`ws://${base}/rtc?access_token=${await at.toJwt()}`);
    expect(status).toBe(101);
    try {
      const room = server.rooms.get('configured-room')!;
      expect(room.settings).toMatchObject({ maxParticipants: 3, departureTimeout: 7 });
      expect(origins).toHaveLength(1);
      const origin = origins[0]!;
      expect(origin.by).toBe('join');
      expect(origin.config?.agents.map((a) => [a.agentName, a.metadata])).toEqual([
        ['avatar-agent', '{"x":1}'],
      ]);
      expect(origin.by === 'join' && origin.claims.sub).toBe('creator');
      expect(room.participant('creator')?.attributes).toEqual({ a: 'b' });
    } finally {
      ws!.close();
    }
  });

  it('closes a room that only an agent joined when its empty timeout passes', async () => {
    const api = new RoomServiceClient(`http://${base}`, KEY, SECRET);
    await api.createRoom({ name: 'agent-only-room', emptyTimeout: 1 });
    const at = new AccessToken(KEY, SECRET, { identity: 'agent-1' });
    at.kind = 'agent' as never;
    at.addGrant({ room: 'agent-only-room', roomJoin: true, agent: true });
    const { status, ws, messages } = await upgradeStatus(
      `ws://${base}/rtc?access_token=${await at.toJwt()}`,
    );
    expect(status).toBe(101);
    try {
      expect(server.rooms.get('agent-only-room')?.participant('agent-1')?.isAgent).toBe(true);
      const deadline = Date.now() + 3_000;
      while (server.rooms.get('agent-only-room') && Date.now() < deadline) {
        await sleep(50);
      }
      expect(server.rooms.get('agent-only-room')).toBeUndefined();
      await sleep(50);
      const leave = messages.find((m) => m.message.case === 'leave');
      expect(leave?.message.value).toMatchObject({ reason: DisconnectReason.ROOM_CLOSED });
    } finally {
      ws!.close();
    }
  });
});
