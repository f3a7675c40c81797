// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import { trackPitch, pitchStatistics } from '../../../src/media/voice/index.js';
import { rejectUpgrade, tokenFromRequest } from '../../../src/devserver/index.js';
import { describeWebRtc } from '../../support/network.js';
import type { TestServer } from '../../server/testServer.js';
import { concatAudio, rms, type AvatarClient } from './avatarClient.js';
import { startMediaStack, type MediaStack } from './mediaStack.js';

const AVATAR = AVATAR_CATALOGUE[0]!;

/**
 * The closed mouth measures about 0.02 in a received frame, the mouth of a speaking avatar up to
 * 0.15; held in the pose of its last sound it measured 0.09.
 */
const MOUTH_TOLERANCE = 0.015;

/** The most open the mouth was in the 500 ms before `atMs`, while the avatar was silent. */
function closedMouth(client: AvatarClient, atMs: number): number {
  const frames = client.framesBetween(atMs - 500, atMs).map((f) => f.mouth);
  expect(frames.length).toBeGreaterThan(5);
  return Math.max(...frames);
}

describeWebRtc(
  'an avatar session end to end (real WebRTC through the embedded server)',
  (address) => {
    let stack: MediaStack;
    let visage: TestServer;

    beforeAll(async () => {
      stack = await startMediaStack(address, { agentAbsenceMs: 2_000 });
      visage = stack.visage;
    }, 60_000);

    afterAll(() => stack?.close());

    const session = (extra: Record<string, unknown> = {}) => stack.session(AVATAR.avatarId, extra);

    const speak = async (id: string, text: string) => {
      const res = await visage.call('POST', `/v1/sessions/${id}/speak`, { json: { text } });
      expect(res.status).toBe(202);
      return ((await res.json()) as { utterance_id: string }).utterance_id;
    };

    it('joins with two peer connections (no /rtc/v1 attempt) and publishes fast, as an agent', async () => {
      // Every /rtc/v1 upgrade is refused here as the server does, by the joining identity.
      const v1Attempts: string[] = [];
      stack.livekit.http.upgrade('/rtc/v1', async (req, socket, _head, url) => {
        const token = tokenFromRequest(req.headers.authorization, url.searchParams);
        const payload = token?.split('.')[1] ?? '';
        const claims = JSON.parse(Buffer.from(payload, 'base64url').toString() || '{}') as {
          sub?: string;
        };
        v1Attempts.push(claims.sub ?? '?');
        rejectUpgrade(socket, 404, 'not found');
      });
      const { session_id, agent_identity, room_name, client } = await session();
      await client.waitFor(() => client.video.length > 0, 10_000, 'video');
      // The frontend's rtc-node, left to its defaults, asks for /rtc/v1 first (so the refusals
      // are seen here); the avatar does not.
      expect(v1Attempts.length).toBeGreaterThan(0);
      expect(v1Attempts).not.toContain('?');
      expect(v1Attempts).not.toContain(agent_identity);
      const avatar = stack.livekit.rooms.get(room_name)?.participant(agent_identity);
      expect(avatar?.isAgent).toBe(true);
      await visage.call('DELETE', `/v1/sessions/${session_id}`);
    }, 30_000);

    it('publishes 512x512 video at about 25 fps that never freezes, and near-silent audio when idle', async () => {
      const { session_id, client } = await session();
      await client.waitFor(() => client.video.length > 10, 10_000, 'video frames');
      const from = client.now();
      await sleep(3_000);
      const frames = client.framesBetween(from, client.now());
      expect(frames.length / 3).toBeGreaterThan(18);
      expect(frames.length / 3).toBeLessThan(32);
      expect(frames.every((f) => f.width === 512 && f.height === 512)).toBe(true);
      // H.264 unless told otherwise (VISAGE_VIDEO_CODEC; the VP8 case is below).
      expect(client.videoMimeType?.toLowerCase()).toBe('video/h264');
      const distinct = new Set(frames.map((f) => f.checksum));
      expect(distinct.size).toBeGreaterThan(frames.length / 2);
      expect(rms(client.audioBetween(from, client.now()))).toBeLessThan(50);
      await visage.call('DELETE', `/v1/sessions/${session_id}`);
    }, 30_000);

    it('speaks: speech-like audio in the voice range, a moving mouth, and lk.chat interims then one final', async () => {
      const { session_id, client } = await session();
      await client.waitFor(() => client.video.length > 10, 10_000, 'video frames');
      await sleep(500);
      const text = 'Hello there. I am the Visage avatar, and I speak the words you send me.';
      const sent = client.now();
      const closed = closedMouth(client, sent);
      const id = await speak(session_id, text);
      await client.waitFor(
        () => client.finals().some((m) => m.utterance_id === id),
        20_000,
        'final',
      );
      const mine = client.chat.filter((m) => m.utterance_id === id);
      expect(mine[0]).toMatchObject({ final: false, text: '' });
      const interims = mine.filter((m) => !m.final);
      expect(interims.length).toBeGreaterThan(5);
      for (let i = 1; i < interims.length; i++)
        expect(interims[i]!.text.startsWith(interims[i - 1]!.text)).toBe(true);
      expect(mine.at(-1)).toMatchObject({ final: true, text });
      expect(mine.filter((m) => m.final)).toHaveLength(1);
      await client.waitFor(
        () => client.transcriptions.some((t) => t.segment === id && t.final),
        5_000,
        'final transcription',
      );
      expect(client.transcriptions.find((t) => t.segment === id && t.final)!.text).toBe(text);
      expect(client.transcriptions.find((t) => t.segment === id && !t.final)!.text).toBe(
        text.slice(0, -1),
      );

      const startMs = mine[0]!.atMs;
      const endMs = mine.at(-1)!.atMs;
      const speech = client.audioBetween(startMs, endMs);
      expect(rms(speech)).toBeGreaterThan(500);
      const firstLoud = client.audio.find((a) => a.atMs > sent && a.rms > 300);
      expect(firstLoud).toBeTruthy();
      const pcm = concatAudio(speech);
      const stats = pitchStatistics(trackPitch(pcm, 48_000));
      // Ada's stock voice is a female-range voice.
      expect(stats.medianHz).toBeGreaterThan(140);
      expect(stats.medianHz).toBeLessThan(320);

      const talking = client.framesBetween(startMs + 200, endMs - 200).map((f) => f.mouth);
      await sleep(800);
      const after = client.framesBetween(endMs + 400, client.now()).map((f) => f.mouth);
      const max = Math.max(...talking);
      expect(max).toBeGreaterThan(Math.max(...after) + 0.02);
      expect(new Set(talking.map((m) => m.toFixed(3))).size).toBeGreaterThan(5);
      // Done speaking, the mouth is closed again as before it spoke (not held in its last pose).
      expect(Math.max(...after)).toBeLessThan(closed + MOUTH_TOLERANCE);
      await visage.call('DELETE', `/v1/sessions/${session_id}`);
    }, 40_000);

    it('plays two speaks in order, and an interrupt cuts the audio with only the heard text in the final', async () => {
      const { session_id, client } = await session();
      await client.waitFor(() => client.video.length > 10, 10_000, 'video frames');
      await sleep(500);
      const closed = closedMouth(client, client.now());
      const a = await speak(session_id, 'First sentence here.');
      const b = await speak(session_id, 'Second one follows.');
      await client.waitFor(
        () => client.finals().filter((m) => [a, b].includes(m.utterance_id ?? '')).length === 2,
        20_000,
        'two finals',
      );
      expect(client.finals().map((m) => m.utterance_id)).toEqual([a, b]);

      const long =
        'This is a long answer that keeps going for a while, so that there is time to interrupt it in the middle of a sentence, long before it would end by itself.';
      const c = await speak(session_id, long);
      const d = await speak(session_id, 'This one is dropped.');
      await client.waitFor(
        () => client.chat.some((m) => m.utterance_id === c && m.text.split(' ').length >= 4),
        20_000,
        'a few words',
      );
      const res = await visage.call('POST', `/v1/sessions/${session_id}/interrupt`);
      const cutAt = client.now();
      expect(await res.json()).toMatchObject({ interrupted: true, dropped_utterances: 1 });
      await client.waitFor(
        () => client.finals().some((m) => m.utterance_id === c),
        5_000,
        'final after interrupt',
      );
      const final = client.finals().find((m) => m.utterance_id === c)!;
      expect(long.startsWith(final.text)).toBe(true);
      expect(final.text.length).toBeGreaterThan(5);
      expect(final.text.length).toBeLessThan(long.length - 20);
      await sleep(1_500);
      expect(rms(client.audioBetween(cutAt + 500, client.now()))).toBeLessThan(100);
      // The mouth closed with the sound, not frozen in the pose of the word that was cut.
      const afterCut = client.framesBetween(cutAt + 500, client.now()).map((f) => f.mouth);
      expect(afterCut.length).toBeGreaterThan(10);
      expect(Math.max(...afterCut)).toBeLessThan(closed + MOUTH_TOLERANCE);
      expect(client.chat.some((m) => m.utterance_id === d)).toBe(false);
      await visage.call('DELETE', `/v1/sessions/${session_id}`);
    }, 60_000);

    it('parks at a low frame rate, refuses speech while parked, and resumes', async () => {
      const { session_id, client } = await session();
      await client.waitFor(() => client.video.length > 10);
      // Frames made a second over the last two seconds, polled until `holds` or 15 s: the state's
      // rate, not the moment it took over (a loaded machine applies a change and resumes the
      // encoder's full rate late; one fixed window read a resumed avatar below its rate).
      const settlesAt = async (holds: (fps: number) => boolean, label: string) => {
        const rates: number[] = [];
        let noted = -Infinity;
        await client
          .waitFor(
            () => {
              const now = client.now();
              const fps = client.framesMadeBetween(now - 2_000, now).length / 2;
              if (now - noted >= 500) {
                noted = now;
                rates.push(fps);
              }
              return holds(fps);
            },
            15_000,
            label,
          )
          .catch((err: unknown) => {
            throw new Error(`${String(err)}; rates seen ${rates.slice(-12).join(', ')}`);
          });
      };
      const park = await visage.call('POST', `/v1/sessions/${session_id}/waiting_state`, {
        json: { waiting: true },
      });
      expect(park.status).toBe(200);
      await sleep(2_000); // the window then holds only frames made after the change
      // Parked: 5 fps (never 0: a viewer keeps a moving picture), well under the full 25.
      await settlesAt((fps) => fps > 1.5 && fps < 10, 'the parked rate');
      expect(
        (await visage.call('POST', `/v1/sessions/${session_id}/speak`, { json: { text: 'no' } }))
          .status,
      ).toBe(409);
      await visage.call('POST', `/v1/sessions/${session_id}/waiting_state`, {
        json: { waiting: false },
      });
      // Resumed: back near the full rate, three times the parked one.
      await settlesAt((fps) => fps > 15, 'the full rate again');
      await visage.call('DELETE', `/v1/sessions/${session_id}`);
    }, 60_000);

    it('leaves the room on DELETE and on the idle timeout', async () => {
      const one = await session();
      expect((await visage.call('DELETE', `/v1/sessions/${one.session_id}`)).status).toBe(204);
      await one.client.waitFor(
        () => one.client.left.includes(one.agent_identity),
        5_000,
        'avatar leaving',
      );

      const two = await session({ idle_timeout_seconds: 5 });
      await two.client.waitFor(
        () => two.client.left.includes(two.agent_identity),
        10_000,
        'idle avatar leaving',
      );
      const s = await visage.call('GET', `/v1/sessions/${two.session_id}`);
      expect(await s.json()).toMatchObject({ status: 'ended', end_reason: 'idle_timeout' });
    }, 40_000);
  },
);

describeWebRtc('an avatar published in VP8 (VISAGE_VIDEO_CODEC=vp8)', (address) => {
  let stack: MediaStack;
  beforeAll(async () => {
    stack = await startMediaStack(address, { videoCodec: 'vp8' });
  }, 60_000);
  afterAll(() => stack?.close());

  it('sends VP8 video at full rate with a moving mouth when it speaks', async () => {
    const { session_id, client } = await stack.session(AVATAR.avatarId);
    await client.waitFor(() => client.video.length > 10, 10_000, 'video frames');
    expect(client.videoMimeType?.toLowerCase()).toBe('video/vp8');
    const res = await stack.visage.call('POST', `/v1/sessions/${session_id}/speak`, {
      json: { text: 'Hello there, this is the older codec speaking.' },
    });
    expect(res.status).toBe(202);
    const from = client.now();
    await client.waitFor(() => client.finals().length > 0, 20_000, 'the final');
    const frames = client.framesMadeBetween(from, client.now());
    // Speaking, not parked (5 fps): a VP8 encoder on a busy 2-core machine was seen to drop to
    // 15 fps in a CI run; the full rate itself is measured by the bench, not asserted here.
    expect(frames.length / ((client.now() - from) / 1000)).toBeGreaterThan(10);
    expect(Math.max(...frames.map((f) => f.mouth))).toBeGreaterThan(0.06);
    await stack.visage.call('DELETE', `/v1/sessions/${session_id}`);
  }, 40_000);
});
