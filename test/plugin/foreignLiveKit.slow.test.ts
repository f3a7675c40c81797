// SPDX-License-Identifier: GPL-3.0-or-later
// An agent on a LiveKit that Visage has no keys for gets a Visage avatar in its room: the plugin
// mints the avatar's token with the agent's own credentials, and that token is the only way in.
// Two embedded LiveKit servers: Visage's own (A) and the agent's (B, keys Visage never sees).
import { setTimeout as sleep } from 'node:timers/promises';
import { dispose, Room } from '@livekit/rtc-node';
import { AccessToken, RoomServiceClient } from 'livekit-server-sdk';
import { tokenize } from '@livekit/agents';
import { testLogger } from '../support/testLog.js';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startDevServer, type DevServer } from '../../src/devserver/index.js';
import { AvatarSession } from '@visage-avatar/livekit-plugin';
import { startMediaStack, type MediaStack } from '../media/room/mediaStack.js';
import { describeWebRtc } from '../support/network.js';
import { agent, agentSession, until } from './agentHarness.js';
import { Frontend } from './frontend.js';
import { MILO } from './pluginHarness.js';

const AGENT_KEY = 'agent-key';
const AGENT_SECRET = `agent-secret-${Math.random().toString(36).slice(2)}-never-given-to-visage`;

describeWebRtc('an agent on a LiveKit Visage has no keys for', (address) => {
  let stack: MediaStack;
  let theirs: DevServer;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    // The namespace addresses are private: this Visage allows them, as a dev setup would.
    stack = await startMediaStack(address, { cap: 2, allowPrivateUrls: true });
    theirs = await startDevServer({
      port: 0,
      host: address,
      nodeIp: address,
      keys: { [AGENT_KEY]: AGENT_SECRET },
      logger: testLogger(),
    });
    expect(theirs.url).not.toBe(stack.livekit.url);
  }, 60_000);

  // Each test's agent, avatar and frontend leave when it ends, so that they do not pile up and
  // load the later tests (see realAvatar.slow.test.ts).
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  }, 120_000);

  afterAll(async () => {
    await theirs?.close();
    await stack?.close();
    await dispose();
  });

  async function tokenFor(room: string, identity: string, kind?: 'agent') {
    const at = new AccessToken(AGENT_KEY, AGENT_SECRET, { identity });
    if (kind) at.kind = kind;
    at.addGrant({ room, roomJoin: true, canPublish: true, canSubscribe: true });
    return at.toJwt();
  }

  async function agentInRoom(roomName: string) {
    const room = new Room();
    await room.connect(theirs.url, await tokenFor(roomName, `agent-${roomName}`, 'agent'), {
      autoSubscribe: true,
      dynacast: false,
    });
    cleanups.push(() => room.disconnect());
    return room;
  }

  async function visageSession(id: string, auth?: string) {
    const res = await stack.visage.call('GET', `/v1/sessions/${id}`, { auth });
    return (await res.json()) as Record<string, unknown>;
  }

  it('the avatar joins the agent room with the token the plugin minted and speaks there', async () => {
    const room = await agentInRoom('their-room');
    const sut = agentSession([{ input: 'hi', content: 'Hello from a foreign LiveKit.' }]);
    cleanups.push(() => sut.close());
    const avatar = new AvatarSession({
      avatarId: MILO,
      apiKey: stack.visage.secret,
      apiUrl: stack.visage.url,
      sentenceTokenizer: new tokenize.basic.SentenceTokenizer({ minSentenceLength: 1 }),
      parkAfterSeconds: null,
    });
    cleanups.push(() => avatar.aclose());
    const metrics: Array<Record<string, unknown>> = [];
    avatar.on('metrics_collected', (m) => metrics.push({ ...m }));

    const startedAt = Date.now();
    const sessionId = await avatar.start(sut.session, room, {
      livekitUrl: theirs.url,
      livekitApiKey: AGENT_KEY,
      livekitApiSecret: AGENT_SECRET,
    });
    // The identity was known before the base class started: it waits for the right participant.
    expect(avatar.avatarIdentity).toMatch(/^visage-avatar-/);
    await avatar.waitForJoin({ timeout: 20_000 });
    const videoAt = Date.now();
    const participant = room.remoteParticipants.get(avatar.avatarIdentity);
    expect(participant?.attributes['lk.publish_on_behalf']).toBe('agent-their-room');
    expect(avatar.participantToken).toBeUndefined();

    const s = await visageSession(sessionId);
    expect(s).toMatchObject({
      status: 'active',
      livekit_url: theirs.url,
      room_name: 'their-room',
      agent_identity: avatar.avatarIdentity,
      publish_on_behalf: 'agent-their-room',
    });
    // Visage's own LiveKit never saw the room.
    const ownRooms = await new RoomServiceClient(
      stack.livekit.httpUrl,
      stack.apiKey,
      stack.apiSecret,
    ).listRooms();
    expect(ownRooms.map((r) => r.name)).not.toContain('their-room');

    // The join metric is timed from the real start (before the session was created).
    const joined = metrics.find((m) => m.avatarJoinedAt !== undefined)!;
    const measured = Number(joined.avatarJoinedAt) - Number(joined.sessionStartedAt);
    console.log(
      `join metric ${measured} ms; start() to the avatar's video in the room ${videoAt - startedAt} ms`,
    );
    expect(Number(joined.sessionStartedAt)).toBeLessThanOrEqual(startedAt + 50);
    expect(Number(joined.avatarJoinedAt)).toBeLessThanOrEqual(videoAt + 50);

    // A frontend on their LiveKit hears the reply.
    await sut.session.start({ agent: agent() });
    const frontend = new Frontend();
    cleanups.push(() => frontend.leave());
    await frontend.join(theirs.url, await tokenFor('their-room', 'user-1'));
    await frontend.waitForTracks();
    await sut.session.run({ userInput: 'hi' }).wait();
    await until(() => frontend.finals().length >= 1, 5_000, 'the final at the frontend');
    expect(frontend.finals().map((m) => m.text)).toEqual(['Hello from a foreign LiveKit.']);

    await avatar.aclose();
    expect(await visageSession(sessionId)).toMatchObject({
      status: 'ended',
      end_reason: 'deleted',
    });
    await until(
      () => !room.remoteParticipants.has(avatar.avatarIdentity),
      10_000,
      'the avatar to leave',
    );
  }, 90_000);

  it('ends with room_closed when their room is deleted, and frees the slot', async () => {
    const token = await (async () => {
      const at = new AccessToken(AGENT_KEY, AGENT_SECRET, { identity: 'avatar-x', ttl: 600 });
      at.addGrant({ room: 'closing-room', roomJoin: true, canPublish: true, canPublishData: true });
      return at.toJwt();
    })();
    const key = await stack.visage.newKey(1);
    const res = await stack.visage.call('POST', '/v1/sessions', {
      json: { avatar_id: MILO, mode: 'video', livekit: { url: theirs.url, token } },
      auth: key.secret,
    });
    expect(res.status).toBe(201);
    const { session_id: id } = (await res.json()) as { session_id: string };
    await new RoomServiceClient(theirs.httpUrl, AGENT_KEY, AGENT_SECRET).deleteRoom('closing-room');
    await expect
      .poll(async () => (await visageSession(id, key.secret)).end_reason, { timeout: 15_000 })
      .toBe('room_closed');
    const list = await stack.visage.call('GET', '/v1/sessions?status=active', {
      auth: key.secret,
    });
    expect(list.headers.get('x-service-concurrent-sessions')).toBe('0');
  }, 60_000);

  /** A session on their LiveKit, created over the API with an avatar token minted there. */
  async function sessionInTheirRoom(room: string, extra: Record<string, unknown> = {}, ttl = 600) {
    const identity = `avatar-${room}`;
    const at = new AccessToken(AGENT_KEY, AGENT_SECRET, { identity, ttl });
    at.addGrant({ room, roomJoin: true, canPublish: true, canPublishData: true });
    const token = await at.toJwt();
    const key = await stack.visage.newKey(1);
    const res = await stack.visage.call('POST', '/v1/sessions', {
      json: { avatar_id: MILO, mode: 'video', livekit: { url: theirs.url, token }, ...extra },
      auth: key.secret,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const { session_id: id } = (await res.json()) as { session_id: string };
    const { exp } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as {
      exp: number;
    };
    const activeCount = async () =>
      (
        await stack.visage.call('GET', '/v1/sessions?status=active', { auth: key.secret })
      ).headers.get('x-service-concurrent-sessions');
    const endReason = async () => (await visageSession(id, key.secret)).end_reason;
    const avatarInRoom = async () =>
      (await new RoomServiceClient(theirs.httpUrl, AGENT_KEY, AGENT_SECRET).listParticipants(room))
        .map((p) => p.identity)
        .includes(identity);
    return { id, identity, expiresAtMs: exp * 1000, activeCount, endReason, avatarInRoom };
  }

  it('in their room too: the idle timeout ends the session and the avatar leaves', async () => {
    const s = await sessionInTheirRoom('idle-room', { idle_timeout_seconds: 5 });
    expect(await s.avatarInRoom()).toBe(true);
    await expect.poll(s.endReason, { timeout: 30_000, interval: 500 }).toBe('idle_timeout');
    expect(await s.activeCount()).toBe('0');
    await expect.poll(s.avatarInRoom, { timeout: 10_000 }).toBe(false);
  }, 60_000);

  it('their LiveKit removing the avatar mid-session ends it (error) and frees the slot', async () => {
    const s = await sessionInTheirRoom('removing-room');
    await new RoomServiceClient(theirs.httpUrl, AGENT_KEY, AGENT_SECRET).removeParticipant(
      'removing-room',
      s.identity,
    );
    await expect.poll(s.endReason, { timeout: 15_000, interval: 250 }).toBe('error');
    expect(await s.activeCount()).toBe('0');
  }, 60_000);

  it('a token that expired is refused when the avatar must reconnect: the session ends (error)', async () => {
    // A short token, yet one Visage takes (it wants 30 s of validity left when the request
    // arrives: 10 s more cover a slow mint-to-request on a busy machine). Once it expired, and
    // LiveKit's 10 s of clock tolerance passed, the signal drops and their LiveKit refuses the
    // avatar back.
    const s = await sessionInTheirRoom('expiring-room', {}, 40);
    const pastTolerance = s.expiresAtMs + 10_000 + 2_000 - Date.now();
    await sleep(pastTolerance);
    expect(await s.endReason()).toBeNull(); // a connected avatar outlives its token
    expect(theirs.dropSignal('expiring-room', s.identity)).toBe(true);
    await expect.poll(s.endReason, { timeout: 60_000, interval: 500 }).toBe('error');
    expect(await s.activeCount()).toBe('0');
  }, 130_000);

  it('a token their LiveKit refuses (wrong secret) is 400 invalid_livekit_token, holding no slot', async () => {
    const at = new AccessToken(AGENT_KEY, 'not-the-secret-of-their-livekit-000000', {
      identity: 'avatar-y',
    });
    at.addGrant({ room: 'refused-room', roomJoin: true });
    const key = await stack.visage.newKey(1);
    const res = await stack.visage.call('POST', '/v1/sessions', {
      auth: key.secret,
      json: {
        avatar_id: MILO,
        mode: 'video',
        livekit: { url: theirs.url, token: await at.toJwt() },
      },
    });
    const body = (await res.json()) as { error: { code: string; message: string } };
    console.log(`refused token: ${res.status} ${body.error.code}: ${body.error.message}`);
    expect({ status: res.status, code: body.error.code }).toEqual({
      status: 400,
      code: 'invalid_livekit_token',
    });
    expect(res.headers.get('x-service-concurrent-sessions')).toBe('0');
  }, 60_000);
});
