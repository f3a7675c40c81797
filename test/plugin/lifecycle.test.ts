// SPDX-License-Identifier: GPL-3.0-or-later
import { type JobContext, Plugin, runWithJobContextAsync, voice } from '@livekit/agents';
import { type Room, RoomEvent } from '@livekit/rtc-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  VisageAuthenticationError,
  VisageConnectionError,
  VisageNotFoundError,
} from '@visage-avatar/client';
import {
  AvatarSession,
  VisageException,
  VisageSpeechOutput,
  VisageTextTTS,
} from '@visage-avatar/livekit-plugin';
import { agentSession } from './agentHarness.js';
import { apiSession, MILO, startPluginHarness, type PluginHarness } from './pluginHarness.js';

let h: PluginHarness;
beforeAll(async () => {
  h = await startPluginHarness();
});
afterAll(() => h?.close());

const ENV = ['VISAGE_API_KEY', 'VISAGE_API_URL', 'LIVEKIT_URL'] as const;
const savedEnv = Object.fromEntries(ENV.map((k) => [k, process.env[k]]));
afterEach(() => {
  for (const k of ENV) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
});

/** Sessions of the test key that the service still counts. */
async function liveSessions(): Promise<string[]> {
  const res = await h.server.call('GET', '/v1/sessions?limit=100');
  const body = (await res.json()) as { data: Array<{ session_id: string; status: string }> };
  return body.data.filter((s) => s.status !== 'ended').map((s) => s.session_id);
}

describe('AvatarSession: start and attach', () => {
  it('creates the session in the agent room, publishing on behalf of the agent, and installs the avatar', async () => {
    const s = await h.start({});
    const res = await h.server.call('GET', `/v1/sessions/${s.sessionId}`);
    const session = (await res.json()) as Record<string, unknown>;
    expect(session).toMatchObject({
      status: 'active',
      avatar_id: MILO,
      room_name: s.room.name,
      publish_on_behalf: 'agent-under-test',
      agent_identity: s.sim.spec.agentIdentity,
    });
    expect(s.avatar.sessionId).toBe(s.sessionId);
    expect(s.avatar.avatarIdentity).toBe(session.agent_identity);
    expect(s.avatar.provider).toBe('visage');
    expect(s.avatar.participantToken?.participant_token).toMatch(/^ey/);
    expect(s.session.output.audio).toBeInstanceOf(VisageSpeechOutput);
    expect(s.session.tts).toBeInstanceOf(VisageTextTTS);
    expect(s.session.tts!.capabilities.alignedTranscript).toBe(false);
  });

  it("asks for a client mode session with face: 'client' (no video; the face drawn in the browser)", async () => {
    const s = await h.start({ avatar: { face: 'client' } });
    const res = await h.server.call('GET', `/v1/sessions/${s.sessionId}`);
    expect(await res.json()).toMatchObject({ mode: 'client', status: 'active' });
    expect(s.sim.spec.mode).toBe('client');
    const video = await h.start({});
    expect(video.sim.spec.mode).toBe('video');
  });

  it("turns off resumeFalseInterruption, agents-js's default, which an avatar cannot honour", async () => {
    // As the README's agent makes it: agents-js's defaults, which would warn at session.start().
    const session = new voice.AgentSession({ vad: null, turnHandling: { turnDetection: null } });
    const interruption = session.sessionOptions.turnHandling.interruption;
    expect(interruption.resumeFalseInterruption).toBe(true);
    const avatar = new AvatarSession({
      avatarId: MILO,
      apiKey: h.server.secret,
      apiUrl: h.server.url,
      parkAfterSeconds: null,
    });
    try {
      await avatar.start(session, h.media.room('plugin-room-no-pause') as unknown as Room);
      expect(session.output.audio?.canPause).toBe(false);
      expect(interruption.resumeFalseInterruption).toBe(false);
    } finally {
      await session.close().catch(() => undefined);
      await avatar.aclose();
    }
  });

  it('reads apiKey and apiUrl from VISAGE_API_KEY and VISAGE_API_URL', async () => {
    process.env.VISAGE_API_KEY = h.server.secret;
    process.env.VISAGE_API_URL = h.server.url;
    const avatar = new AvatarSession({ avatarId: MILO, parkAfterSeconds: null });
    const sut = agentSession([]);
    try {
      const id = await avatar.start(sut.session, h.media.room('env-room') as unknown as Room);
      expect((await apiSession(h.server, id)).status).toBe('active');
    } finally {
      await avatar.aclose();
      await sut.close();
    }
  });

  it('refuses unusable options with VisageException', () => {
    delete process.env.VISAGE_API_KEY;
    expect(() => new AvatarSession({ avatarId: MILO })).toThrow(VisageException);
    expect(() => new AvatarSession({ avatarId: MILO })).toThrow(/VISAGE_API_KEY/);
    expect(() => new AvatarSession({ apiKey: 'sk_x' })).toThrow(/avatarId/);
    expect(() => new AvatarSession({ avatarId: MILO, apiKey: 'pk_x' })).toThrow(/secret key/);
    expect(
      () => new AvatarSession({ avatarId: MILO, apiKey: 'sk_x', parkAfterSeconds: 0 }),
    ).toThrow(/parkAfterSeconds/);
    expect(
      () =>
        new AvatarSession({
          avatarId: MILO,
          apiKey: 'sk_x',
          face: 'canvas' as unknown as 'client',
        }),
    ).toThrow(/face must be 'video' or 'client'/);
  });

  it('fails start with a typed error for a bad key or an unknown avatar, leaving nothing live', async () => {
    const before = await liveSessions();
    const badKey = new AvatarSession({
      avatarId: MILO,
      apiKey: 'sk_' + 'x'.repeat(40),
      apiUrl: h.server.url,
    });
    const sut = agentSession([]);
    await expect(
      badKey.start(sut.session, h.media.room('bad-key') as unknown as Room),
    ).rejects.toBeInstanceOf(VisageAuthenticationError);
    const unknown = new AvatarSession({
      avatarId: 'avt_Nobody000000000000000001',
      apiKey: h.server.secret,
      apiUrl: h.server.url,
    });
    const error = await unknown
      .start(sut.session, h.media.room('unknown-avatar') as unknown as Room)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VisageNotFoundError);
    expect((error as VisageNotFoundError).code).toBe('avatar_not_found');
    expect(await liveSessions()).toEqual(before);
    await sut.close();
  });

  it('retries an unreachable service connOptions.maxRetry times, then raises VisageConnectionError', async () => {
    const avatar = new AvatarSession({
      avatarId: MILO,
      apiKey: h.server.secret,
      apiUrl: 'http://127.0.0.1:9', // discard port: connection refused
      connOptions: { maxRetry: 2, retryIntervalMs: 200, timeoutMs: 1_000 },
    });
    const sut = agentSession([]);
    const started = Date.now();
    const error = await avatar
      .start(sut.session, h.media.room('unreachable') as unknown as Room)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VisageConnectionError);
    // Two retries: the framework's short first interval, then retryIntervalMs.
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    await avatar.aclose();
    await sut.close();
  });

  it('refuses a room the agent has not connected yet, before creating anything', async () => {
    const before = await liveSessions();
    const room = Object.assign(h.media.room(''), { localParticipant: undefined });
    const avatar = new AvatarSession({
      avatarId: MILO,
      apiKey: h.server.secret,
      apiUrl: h.server.url,
    });
    const sut = agentSession([]);
    await expect(avatar.start(sut.session, room as unknown as Room)).rejects.toThrow(
      /ctx\.connect/,
    );
    expect(avatar.sessionId).toBeUndefined();
    expect(await liveSessions()).toEqual(before);
    await sut.close();
  });

  it('attaches to an existing session by sessionId', async () => {
    const room = h.media.room('attach-room');
    const res = await h.server.call('POST', '/v1/sessions', {
      json: { avatar_id: MILO, mode: 'video', room_name: room.name },
    });
    const created = (await res.json()) as { session_id: string; agent_identity: string };
    const avatar = new AvatarSession({
      sessionId: created.session_id,
      apiKey: h.server.secret,
      apiUrl: h.server.url,
      parkAfterSeconds: null,
    });
    const sut = agentSession([]);
    try {
      expect(await avatar.start(sut.session, room as unknown as Room)).toBe(created.session_id);
      expect(avatar.avatarIdentity).toBe(created.agent_identity);
      await sut.session.start({ agent: new voice.Agent({ instructions: 'test' }) });
      await sut.session.say('Attached and speaking.').waitForPlayout();
      expect(h.media.sessions.get(created.session_id)!.finals()).toEqual([
        'Attached and speaking.',
      ]);
    } finally {
      await sut.close();
      await avatar.aclose();
    }
    expect((await apiSession(h.server, created.session_id)).status).toBe('ended');
  });

  it('refuses to attach to a session of another room', async () => {
    const res = await h.server.call('POST', '/v1/sessions', {
      json: { avatar_id: MILO, mode: 'video', room_name: 'somewhere-else' },
    });
    const { session_id } = (await res.json()) as { session_id: string };
    const avatar = new AvatarSession({
      sessionId: session_id,
      apiKey: h.server.secret,
      apiUrl: h.server.url,
    });
    const sut = agentSession([]);
    await expect(
      avatar.start(sut.session, h.media.room('my-room') as unknown as Room),
    ).rejects.toThrow(/somewhere-else/);
    await sut.close();
  });

  it('registers itself with the agents framework', () => {
    const mine = Plugin.registeredPlugins.filter((p) => p.title === 'visage');
    expect(mine).toHaveLength(1);
    expect(mine[0]!.package).toBe('@visage-avatar/livekit-plugin');
  });
});

describe('AvatarSession: shutdown', () => {
  it('aclose() deletes the session: the avatar leaves and the slot is freed', async () => {
    const s = await h.start({});
    await s.avatar.aclose();
    expect(await apiSession(h.server, s.sessionId)).toMatchObject({
      status: 'ended',
      end_reason: 'deleted',
    });
    expect(s.sim.closed).toBe(true);
    await s.avatar.aclose(); // idempotent
  });

  it("the job's shutdown callback deletes the session", async () => {
    // The part of a JobContext the plugin and its base class use.
    const shutdownCallbacks: Array<() => Promise<void>> = [];
    const job = {
      agent: { identity: 'agent-in-a-job' },
      job: { room: { name: 'job-room' } },
      info: { url: 'ws://127.0.0.1:1', apiKey: 'devkey', apiSecret: 'unused' },
      addShutdownCallback: (cb: () => Promise<void>) => shutdownCallbacks.push(cb),
    } as unknown as JobContext;
    const sut = agentSession([]);
    const avatar = new AvatarSession({
      avatarId: MILO,
      apiKey: h.server.secret,
      apiUrl: h.server.url,
    });
    const room = h.media.room('job-room', 'agent-in-a-job');
    const id = await runWithJobContextAsync(job, () =>
      avatar.start(sut.session, room as unknown as Room),
    );
    const session = (await (await h.server.call('GET', `/v1/sessions/${id}`)).json()) as Record<
      string,
      unknown
    >;
    expect(session).toMatchObject({ status: 'active', publish_on_behalf: 'agent-in-a-job' });
    expect(shutdownCallbacks).toHaveLength(1);
    await shutdownCallbacks[0]!();
    expect(await apiSession(h.server, id)).toMatchObject({
      status: 'ended',
      end_reason: 'deleted',
    });
    await sut.close();
  });

  it('closing the AgentSession ends the avatar session too', async () => {
    const s = await h.start({});
    await s.session.close();
    await expect
      .poll(async () => (await apiSession(h.server, s.sessionId)).status, { timeout: 5_000 })
      .toBe('ended');
  });

  it('a start that fails half way ends the session it created', async () => {
    const sut = agentSession([]);
    const avatar = new AvatarSession({
      avatarId: MILO,
      apiKey: h.server.secret,
      apiUrl: h.server.url,
    });
    // The session is created, then the room refuses the avatar's lk.chat listener (as a room
    // torn down meanwhile does): the start fails after the create.
    const room = h.media.room('half-way');
    const on = room.on.bind(room);
    room.on = (event: string | symbol, listener: (...args: unknown[]) => void) => {
      if (event === RoomEvent.DataReceived) throw new Error('the room is gone');
      return on(event, listener);
    };
    const before = await liveSessions();
    const error = await avatar.start(sut.session, room as unknown as Room).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('the room is gone');
    const id = avatar.sessionId!;
    expect(id).toMatch(/^ses_/);
    expect(await apiSession(h.server, id)).toMatchObject({
      status: 'ended',
      end_reason: 'deleted',
    });
    expect(await liveSessions()).toEqual(before);
    await sut.close();
  });

  it('aclose() during start aborts it and ends whatever was created', async () => {
    const sut = agentSession([]);
    const avatar = new AvatarSession({
      avatarId: MILO,
      apiKey: h.server.secret,
      apiUrl: h.server.url,
    });
    const before = await liveSessions();
    const starting = avatar
      .start(sut.session, h.media.room('closed-while-starting') as unknown as Room)
      .catch((e: unknown) => e);
    await avatar.aclose();
    const outcome = await starting;
    expect(outcome).toBeInstanceOf(VisageException);
    expect(await liveSessions()).toEqual(before);
    await sut.close();
  });

  it('refreshParticipantToken() re-mints a token for the same session', async () => {
    const s = await h.start({});
    const first = s.avatar.participantToken!;
    const fresh = await s.avatar.refreshParticipantToken();
    expect(fresh.participant_token).toMatch(/^ey/);
    expect(Date.parse(fresh.expires_at)).toBeGreaterThan(Date.now());
    expect(s.avatar.participantToken).toEqual(fresh);
    expect(first.participant_token).not.toBe('');
    await s.avatar.aclose();
    await expect(s.avatar.refreshParticipantToken()).rejects.toMatchObject({
      code: 'session_ended',
    });
  });
});
