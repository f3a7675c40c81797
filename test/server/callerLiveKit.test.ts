// SPDX-License-Identifier: GPL-3.0-or-later
import { AccessToken, TrackSource, type VideoGrant } from 'livekit-server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MediaSessionSpec } from '../../src/media/mediaCore.js';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { resolveCallerLiveKit } from '../../src/server/sessions/creation/callerLiveKit.js';
import { DetachedMediaCore } from './detachedMedia.js';
import { LIVEKIT_FOR_TESTS, startTestServer, type TestServer } from './testServer.js';

// A LiveKit whose keys Visage does not have: only the caller's token gets the avatar in.
const CALLER_KEY = 'caller-key';
const CALLER_SECRET = 'caller-secret-that-visage-never-sees-0123';
const AVATAR = AVATAR_CATALOGUE[0]!.avatarId;

interface TokenOptions {
  grant?: Partial<VideoGrant> | null;
  ttl?: number | string;
  attributes?: Record<string, string>;
  identity?: string;
}

async function callerToken(o: TokenOptions = {}) {
  const at = new AccessToken(CALLER_KEY, CALLER_SECRET, {
    identity: o.identity ?? 'avatar-in-my-room',
    ttl: o.ttl ?? 600,
  });
  if (o.attributes) at.attributes = o.attributes;
  if (o.grant !== null) {
    at.addGrant({
      roomJoin: true,
      room: 'my-room',
      canPublish: true,
      canPublishData: true,
      canPublishSources: [TrackSource.CAMERA, TrackSource.MICROPHONE],
      ...o.grant,
    });
  }
  return at.toJwt();
}

/** The media seam records what the session manager asked it to join. */
class RecordingMedia extends DetachedMediaCore {
  readonly specs: MediaSessionSpec[] = [];
  override async start(spec: MediaSessionSpec) {
    this.specs.push(spec);
    return super.start(spec);
  }
}

let server: TestServer;
const media = new RecordingMedia();

beforeAll(async () => {
  server = await startTestServer({ start: { media }, cap: 2 });
});

afterAll(async () => {
  await server?.close();
});

const create = (livekit: unknown, extra: Record<string, unknown> = {}) =>
  server.call('POST', '/v1/sessions', {
    json: { avatar_id: AVATAR, mode: 'video', livekit, ...extra },
  });

async function expectRefused(res: Response, status: number, code: string, param?: string) {
  const body = (await res.json()) as { error: { code: string; param?: string; message: string } };
  expect({ status: res.status, code: body.error.code }).toEqual({ status, code });
  if (param) expect(body.error.param).toBe(param);
  // Nothing was created: the key holds no slot.
  expect(res.headers.get('x-service-concurrent-sessions')).toBe('0');
  return body.error;
}

describe('a LiveKit the caller brings (livekit: { url, token })', () => {
  it('joins the room of the token with the token; room and identity come from it, no participant token', async () => {
    const token = await callerToken({ attributes: { 'lk.publish_on_behalf': 'agent-7' } });
    // The service's own LiveKit host passes the address policy (the operator configured it).
    const url = LIVEKIT_FOR_TESTS.url;
    const res = await create({ url, token });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      livekit_url: url,
      room_name: 'my-room',
      agent_identity: 'avatar-in-my-room',
      publish_on_behalf: 'agent-7',
      status: 'active',
    });
    expect(body).not.toHaveProperty('participant_token');
    expect(body).not.toHaveProperty('participant_token_expires_at');
    expect(media.specs.at(-1)).toMatchObject({
      roomName: 'my-room',
      agentIdentity: 'avatar-in-my-room',
      publishOnBehalf: 'agent-7',
      livekit: { url, token },
    });
    const id = body.session_id as string;
    const got = (await (await server.call('GET', `/v1/sessions/${id}`)).json()) as {
      livekit_url: string;
    };
    expect(got.livekit_url).toBe(url);
    // Visage cannot mint tokens for a room on a LiveKit it has no keys for.
    const reMint = await server.call('POST', `/v1/sessions/${id}/participant_token`);
    expect(reMint.status).toBe(409);
    expect(((await reMint.json()) as { error: { code: string } }).error.code).toBe(
      'participant_token_unavailable',
    );
    expect((await server.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
  });

  it('takes publish_on_behalf from the request when the token has none, refuses a contradiction', async () => {
    const token = await callerToken();
    const res = await create(
      { url: LIVEKIT_FOR_TESTS.url, token },
      { publish_on_behalf: 'agent-9' },
    );
    expect(res.status).toBe(201);
    const body = (await res.json()) as { session_id: string; publish_on_behalf: string };
    expect(body.publish_on_behalf).toBe('agent-9');
    await server.call('DELETE', `/v1/sessions/${body.session_id}`);

    const tagged = await callerToken({ attributes: { 'lk.publish_on_behalf': 'agent-7' } });
    await expectRefused(
      await create({ url: LIVEKIT_FOR_TESTS.url, token: tagged }, { publish_on_behalf: 'x' }),
      400,
      'invalid_livekit_token',
      'publish_on_behalf',
    );
  });

  it('refuses tokens the avatar cannot use with 400 invalid_livekit_token, creating nothing', async () => {
    const url = LIVEKIT_FOR_TESTS.url;
    const cases: Array<[string, string]> = [
      ['not a JWT', 'garbage'],
      ['not a JWT (payload)', 'a.b.c'],
      ['expired', await callerToken({ ttl: -60 })],
      ['expires at once', await callerToken({ ttl: 5 })],
      ['no video grant', await callerToken({ grant: null })],
      ['no roomJoin', await callerToken({ grant: { roomJoin: false } })],
      ['no room (any room)', await callerToken({ grant: { room: undefined } })],
      ['canPublish false', await callerToken({ grant: { canPublish: false } })],
      ['canPublishData false', await callerToken({ grant: { canPublishData: false } })],
      [
        'microphone only',
        await callerToken({ grant: { canPublishSources: [TrackSource.MICROPHONE] } }),
      ],
    ];
    for (const [why, token] of cases) {
      const error = await expectRefused(
        await create({ url, token }),
        400,
        'invalid_livekit_token',
        'livekit.token',
      );
      expect(error.message, why).toMatch(/livekit\.token/);
    }
    expect(
      media.specs.filter((s) => 'token' in s.livekit && s.livekit.token === 'garbage'),
    ).toEqual([]);
  });

  it('applies the outbound address policy to the URL, and room_name cannot be given beside it', async () => {
    const token = await callerToken();
    for (const url of [
      'ws://10.1.2.3:7880',
      'wss://127.0.0.2',
      'ws://[::1]:7880',
      'ws://169.254.169.254',
    ]) {
      await expectRefused(await create({ url, token }), 400, 'url_not_allowed', 'livekit.url');
    }
    await expectRefused(
      await create({ url: 'https://example.com', token }),
      400,
      'validation_failed',
    );
    await expectRefused(
      await create({ url: 'wss://user:pw@example.com', token }),
      400,
      'url_not_allowed',
    );
    await expectRefused(
      await create({ url: LIVEKIT_FOR_TESTS.url, token }, { room_name: 'other' }),
      400,
      'validation_failed',
      'room_name',
    );
    await expectRefused(
      await create({ url: LIVEKIT_FOR_TESTS.url, token }, { agent_identity: 'someone' }),
      400,
      'validation_failed',
      'agent_identity',
    );
    await expectRefused(await create({ url: LIVEKIT_FOR_TESTS.url }), 400, 'validation_failed');
  });

  it('resolves public host names and refuses any private answer (resolver unit)', async () => {
    const token = await callerToken();
    const policy = (addresses: string[]) => ({
      allowPrivate: false,
      lookupAll: async () => addresses,
    });
    await expect(
      resolveCallerLiveKit({ url: 'wss://lk.example.com', token }, policy(['203.0.114.7'])),
    ).resolves.toMatchObject({ roomName: 'my-room', identity: 'avatar-in-my-room' });
    await expect(
      resolveCallerLiveKit(
        { url: 'wss://lk.example.com', token },
        policy(['203.0.114.7', '10.0.0.1']),
      ),
    ).rejects.toMatchObject({ code: 'url_not_allowed' });
    await expect(
      resolveCallerLiveKit({ url: 'ws://10.0.0.1', token }, { allowPrivate: true }),
    ).resolves.toMatchObject({ url: 'ws://10.0.0.1' });
  });
});
