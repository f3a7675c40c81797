// SPDX-License-Identifier: GPL-3.0-or-later
// The plugin's `avatarImage`: a portrait (path or bytes) becomes a photo avatar once per key and
// picture, and the session runs with it. A real Visage server with real face detection and atlas
// builds; the media is the simulated avatar (no WebRTC needed).
import type { Room } from '@livekit/rtc-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VisageApiError } from '@visage-avatar/client';
import { AvatarSession, VisageException } from '@visage-avatar/livekit-plugin';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { photoThreadPool } from '../../src/media/photo/index.js';
import { clmtrackrImage } from '../support/portraitSet.js';
import {
  ASTRONAUT_PATH,
  astronaut,
  astronautJpeg,
  astronautWebp,
  gif,
} from '../support/portraits.js';
import { agentSession } from './agentHarness.js';
import { startPluginHarness, type PluginHarness } from './pluginHarness.js';

let h: PluginHarness;
beforeAll(async () => {
  h = await startPluginHarness();
});
afterAll(async () => {
  await h?.close();
  await photoThreadPool().close();
});

interface AvatarRow {
  avatar_id: string;
  name: string;
  source: string;
}

async function photoAvatars(): Promise<AvatarRow[]> {
  const res = await h.server.call('GET', '/v1/avatars?limit=100');
  const body = (await res.json()) as { data: AvatarRow[] };
  return body.data.filter((a) => a.source === 'photo');
}

async function sessionAvatar(sessionId: string): Promise<string> {
  const res = await h.server.call('GET', `/v1/sessions/${sessionId}`);
  return ((await res.json()) as { avatar_id: string }).avatar_id;
}

async function sessionVoice(sessionId: string): Promise<string> {
  const res = await h.server.call('GET', `/v1/sessions/${sessionId}`);
  return ((await res.json()) as { voice_id: string }).voice_id;
}

describe('AvatarSession with avatarImage', () => {
  it('makes the photo avatar from a path and starts the session with it', async () => {
    const s = await h.start({ avatar: { avatarId: undefined, avatarImage: ASTRONAUT_PATH } });
    const photos = await photoAvatars();
    expect(photos).toHaveLength(1);
    expect(photos[0]!.name).toMatch(/^photo [0-9a-f]{16}$/);
    expect(await sessionAvatar(s.sessionId)).toBe(photos[0]!.avatar_id);
    expect(s.sim.spec.avatar).toEqual({
      source: 'photo',
      buildId: `${photos[0]!.avatar_id}.build`,
    });
  }, 120_000);

  it('reuses it for the same picture given as bytes, in another AvatarSession', async () => {
    const [made] = await photoAvatars();
    const s = await h.start({
      avatar: { avatarId: undefined, avatarImage: Buffer.from(astronaut()) },
    });
    expect(await sessionAvatar(s.sessionId)).toBe(made!.avatar_id);
    expect(await photoAvatars()).toHaveLength(1);
  }, 60_000);

  it('concurrent starts with a new picture make one avatar', async () => {
    const jpeg = await astronautJpeg();
    const [a, b] = await Promise.all([
      h.start({ avatar: { avatarId: undefined, avatarImage: jpeg } }),
      h.start({ avatar: { avatarId: undefined, avatarImage: jpeg } }),
    ]);
    const photos = await photoAvatars();
    expect(photos).toHaveLength(2);
    expect(await sessionAvatar(a.sessionId)).toBe(photos[0]!.avatar_id);
    expect(await sessionAvatar(b.sessionId)).toBe(photos[0]!.avatar_id);
  }, 120_000);

  it('a picture the service refuses fails start with its typed error, leaving nothing', async () => {
    const sut = agentSession([]);
    const avatar = new AvatarSession({
      avatarImage: await gif(),
      apiKey: h.server.secret,
      apiUrl: h.server.url,
    });
    const error = await avatar
      .start(sut.session, h.media.room('bad-picture') as unknown as Room)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VisageApiError);
    expect((error as VisageApiError).code).toBe('unsupported_image');
    expect(await photoAvatars()).toHaveLength(2);
    await sut.close();
    await avatar.aclose();
  });

  it('a path that cannot be read fails start with VisageException', async () => {
    const sut = agentSession([]);
    const avatar = new AvatarSession({
      avatarImage: '/nonexistent/portrait.png',
      apiKey: h.server.secret,
      apiUrl: h.server.url,
    });
    const error = await avatar
      .start(sut.session, h.media.room('no-file') as unknown as Room)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VisageException);
    expect((error as Error).message).toMatch(/cannot read \/nonexistent\/portrait\.png: ENOENT/);
    await sut.close();
    await avatar.aclose();
  });

  // The build runs inside POST /v1/avatars: seconds, more on a busy machine. A plugin that gave
  // up after its request timeout failed the start while the service still stored the avatar.
  it('waits for a build that outlasts the request timeout', async () => {
    const before = await photoAvatars();
    const s = await h.start({
      avatar: {
        avatarId: undefined,
        avatarImage: await astronautWebp(),
        connOptions: { maxRetry: 0, retryIntervalMs: 100, timeoutMs: 1_000 },
      },
    });
    const photos = await photoAvatars();
    expect(photos).toHaveLength(before.length + 1);
    expect(await sessionAvatar(s.sessionId)).toBe(photos[0]!.avatar_id);
  }, 120_000);

  // Issue 43: a man's portrait spoke with Ada's voice. Without voiceId the session speaks with
  // the avatar's default, the stock voice that fits the face; voiceId chooses another.
  it('speaks with the voice that fits the portrait, or with voiceId beside avatarImage', async () => {
    const voice = (name: string) =>
      AVATAR_CATALOGUE.find((a) => a.name === name)!.defaultVoice.voiceId;
    const obama = Buffer.from(clmtrackrImage('obama4_crop.jpg'));
    const fitted = await h.start({ avatar: { avatarId: undefined, avatarImage: obama } });
    expect(await sessionVoice(fitted.sessionId)).toBe(voice('Milo'));
    const chosen = await h.start({
      avatar: { avatarId: undefined, avatarImage: obama, voiceId: voice('Noor') },
    });
    expect(await sessionAvatar(chosen.sessionId)).toBe(await sessionAvatar(fitted.sessionId));
    expect(await sessionVoice(chosen.sessionId)).toBe(voice('Noor'));
    // Eileen Collins, made in the first test without a voice: a woman's voice.
    const astronautSession = await h.start({
      avatar: { avatarId: undefined, avatarImage: ASTRONAUT_PATH },
    });
    expect(await sessionVoice(astronautSession.sessionId)).toBe(voice('Ada'));
  }, 120_000);

  it('refuses avatarImage beside avatarId or sessionId, and an empty picture', () => {
    const base = { apiKey: h.server.secret, apiUrl: h.server.url };
    const image = ASTRONAUT_PATH;
    expect(() => new AvatarSession({ ...base, avatarImage: image, avatarId: 'avt_x' })).toThrow(
      VisageException,
    );
    expect(() => new AvatarSession({ ...base, avatarImage: image, sessionId: 'ses_x' })).toThrow(
      /only one of/,
    );
    expect(() => new AvatarSession({ ...base, avatarImage: new Uint8Array(0) })).toThrow(
      /required|empty/,
    );
  });
});
