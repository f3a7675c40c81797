import { Room, RoomEvent, TrackKind, VideoStream, type RemoteTrack } from '@livekit/rtc-node';
import { AccessToken } from 'livekit-server-sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import { decodePhotoBuild, photoWorkerPool } from '../../../src/media/photo/index.js';
import {
  avatarAtlasAsync,
  BREATH_LEVELS,
  GAZES,
  renderStill,
  SWAY_OFFSETS,
  unpackAtlas,
  type AvatarAtlas,
  type GazeName,
  type Rect,
} from '../../../src/media/render/index.js';
import { AGENT_STATE_ATTRIBUTE } from '../../../src/media/session/agentStateWatcher.js';
import { describeWebRtc } from '../../support/network.js';
import { astronaut, multipartImage } from '../../support/portraits.js';
import { startMediaStack, type MediaStack } from './mediaStack.js';

/** The eyes and brows of an atlas, with room for the head's sway and breathing around them. */
function eyesAndBrows(atlas: AvatarAtlas): Rect {
  const eyes = atlas.eyes.rect;
  return {
    x: eyes.x - 4,
    y: eyes.y - BREATH_LEVELS - 2,
    width: eyes.width + 8,
    height: eyes.height + BREATH_LEVELS + 4,
  };
}

function crop(luma: Uint8Array, stride: number, region: Rect): Uint8Array {
  const out = new Uint8Array(region.width * region.height);
  for (let y = 0; y < region.height; y++) {
    const row = (region.y + y) * stride + region.x;
    out.set(luma.subarray(row, row + region.width), y * region.width);
  }
  return out;
}

interface Template {
  /** The gaze drawn, or `closed` for shut lids (a blink). */
  gaze: GazeName | 'closed';
  lift: number;
  crop: Uint8Array;
}

/**
 * The avatar's eyes as the atlas draws them: every gaze with open lids, and the looks the
 * conversation uses with lowered and shut lids (nod, thinking, blinks), at every breathing lift
 * and sway.
 */
function templates(atlas: AvatarAtlas, region: Rect): Template[] {
  const looks: { gaze: GazeName; lid: number }[] = GAZES.map(({ name }) => ({
    gaze: name,
    lid: 0,
  }));
  for (const gaze of ['center', 'left', 'right'] as const) {
    for (const lid of [0.4, 1]) looks.push({ gaze, lid });
  }
  const out: Template[] = [];
  for (const { gaze, lid } of looks) {
    for (let lift = 0; lift < BREATH_LEVELS; lift++) {
      for (const sway of SWAY_OFFSETS) {
        const still = renderStill(atlas, { gaze, lid, breath: lift, sway });
        out.push({ gaze: lid === 1 ? 'closed' : gaze, lift, crop: crop(still, 512, region) });
      }
    }
  }
  return out;
}

/** The nearest template: which gaze (brows included) and how high the head is in a frame. */
function classify(frame: Uint8Array, all: Template[]): { gaze: Template['gaze']; lift: number } {
  let best = all[0]!;
  let bestSad = Infinity;
  for (const t of all) {
    let sad = 0;
    for (let i = 0; i < frame.length && sad < bestSad; i++) sad += Math.abs(frame[i]! - t.crop[i]!);
    if (sad < bestSad) {
      bestSad = sad;
      best = t;
    }
  }
  return { gaze: best.gaze, lift: best.lift };
}

describeWebRtc(
  'an agent avatar listens and thinks (lk.agent.state through a real room)',
  (address) => {
    let stack: MediaStack;

    beforeAll(async () => {
      stack = await startMediaStack(address);
    }, 60_000);

    afterAll(async () => {
      await stack?.close();
      await photoWorkerPool().close();
    });

    /** A stock figure, and a photo avatar made from the astronaut portrait. */
    const kinds: [string, () => Promise<{ avatarId: string; atlas: AvatarAtlas }>][] = [
      [
        'a stock figure',
        async () => {
          const { avatarId } = AVATAR_CATALOGUE[1]!;
          return { avatarId, atlas: await avatarAtlasAsync(avatarId) };
        },
      ],
      [
        'a photo avatar',
        async () => {
          const res = await stack.visage.call('POST', '/v1/avatars', {
            body: multipartImage(astronaut(), { name: 'Eileen' }),
          });
          expect(res.status).toBe(201);
          const { avatar_id: avatarId } = (await res.json()) as { avatar_id: string };
          const file = `${avatarId}.build`;
          const atlas = unpackAtlas(decodePhotoBuild(await stack.visage.files.get(file), file));
          return { avatarId, atlas };
        },
      ],
    ];

    it.each(kinds)(
      '%s looks at the viewer while listening, nods at the end of the turn, lifts the brows at a question, looks aside while thinking',
      async (kind, avatar) => {
        const { avatarId, atlas } = await avatar();
        const region = eyesAndBrows(atlas);
        const all = templates(atlas, region);
        const roomName = `listening-${Date.now()}`;
        const agentIdentity = `agent-listens-${kind.length}`;
        const created = await stack.create(avatarId, {
          room_name: roomName,
          publish_on_behalf: agentIdentity,
        });

        // A viewer that keeps the eyes of every frame it receives.
        const t0 = performance.now();
        const now = () => performance.now() - t0;
        const frames: { atMs: number; eyes: Uint8Array }[] = [];
        const viewer = new Room();
        viewer.on(RoomEvent.TrackSubscribed, (track: RemoteTrack) => {
          if (track.kind !== TrackKind.KIND_VIDEO) return;
          void (async () => {
            for await (const ev of new VideoStream(track)) {
              const f = ev.frame.type === 5 ? ev.frame : ev.frame.convert(5);
              if (f.width === 512 && f.height === 512)
                frames.push({ atMs: now(), eyes: crop(f.data, 512, region) });
            }
          })().catch(() => undefined);
        });
        await viewer.connect(created.livekit_url, created.participant_token, {
          autoSubscribe: true,
          dynacast: false,
        });

        const at = new AccessToken(stack.apiKey, stack.apiSecret, { identity: agentIdentity });
        at.kind = 'agent';
        at.addGrant({
          roomJoin: true,
          room: roomName,
          canPublish: true,
          canSubscribe: true,
          canUpdateOwnMetadata: true,
        });
        const agent = new Room();
        await agent.connect(created.livekit_url, await at.toJwt(), {
          autoSubscribe: false,
          dynacast: false,
        });
        const setState = (state: string) =>
          agent.localParticipant!.setAttributes({ [AGENT_STATE_ATTRIBUTE]: state });
        /** The user's words as agents-js publishes them: a final lk.transcription segment. */
        const userSaid = async (text: string, segment: string) => {
          const writer = await agent.localParticipant!.streamText({
            topic: 'lk.transcription',
            attributes: {
              'lk.transcription_final': 'true',
              'lk.segment_id': segment,
              'lk.transcribed_track_id': 'TR_user_microphone',
            },
          });
          await writer.write(text);
          await writer.close();
        };
        const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
        const waitFor = async (what: () => boolean, label: string) => {
          const until = performance.now() + 20_000;
          while (!what()) {
            if (performance.now() > until) throw new Error(`timed out waiting for ${label}`);
            await sleep(50);
          }
        };

        await waitFor(() => frames.length > 25, 'the first second of video');
        await setState('listening');
        await sleep(800);
        const listenFrom = now();
        await userSaid('I would like to book a table for two.', 'SG_1');
        await sleep(3_000);
        const askedAt = now();
        await userSaid('Do you have anything at eight?', 'SG_2');
        await sleep(2_000);
        const turnEndedAt = now();
        await setState('thinking');
        await sleep(4_500);
        const thinkingUntil = now();
        await setState('speaking');
        await sleep(300);

        const seen = frames.map((f) => ({ atMs: f.atMs, ...classify(f.eyes, all) }));
        const between = (from: number, to: number) =>
          seen.filter((f) => f.atMs >= from && f.atMs < to);
        const share = (fs: typeof seen, gazes: readonly Template['gaze'][]) =>
          fs.filter((f) => gazes.includes(f.gaze)).length / Math.max(1, fs.length);
        /** The largest drop of the head within `ms`: the nod's signature (breathing is far slower). */
        const fastestDrop = (fs: typeof seen, ms = 300) => {
          let drop = 0;
          for (let i = 0; i < fs.length; i++) {
            for (let j = i + 1; j < fs.length && fs[j]!.atMs - fs[i]!.atMs <= ms; j++) {
              drop = Math.max(drop, fs[i]!.lift - fs[j]!.lift);
            }
          }
          return drop;
        };

        const listening = between(listenFrom, askedAt);
        const asked = between(askedAt, askedAt + 1_800);
        const nod = between(turnEndedAt, turnEndedAt + 1_500);
        const thinking = between(turnEndedAt + 1_500, thinkingUntil);
        const summary = (fs: typeof seen) => {
          const counts: Record<string, number> = {};
          for (const f of fs) counts[f.gaze] = (counts[f.gaze] ?? 0) + 1;
          return `${fs.length} frames ${JSON.stringify(counts)}, fastest drop ${fastestDrop(fs)} px`;
        };
        console.log(
          [
            `${kind}:`,
            `listening (a statement heard): ${summary(listening)}`,
            `after the question: ${summary(asked)}`,
            `turn ended (listening -> thinking): ${summary(nod)}`,
            `thinking: ${summary(thinking)}`,
          ].join('\n'),
        );

        expect(listening.length).toBeGreaterThan(25);
        // Eyes on the viewer, brows at rest (a statement is no question), no nod.
        expect(share(listening, ['center', 'closed'])).toBeGreaterThanOrEqual(0.9);
        expect(fastestDrop(listening)).toBeLessThan(2);
        // The question lifts the brows.
        expect(asked.filter((f) => f.gaze === 'center-raised').length).toBeGreaterThanOrEqual(8);
        // The end of the turn: the head goes down the whole breath range within 300 ms.
        expect(fastestDrop(nod)).toBeGreaterThanOrEqual(BREATH_LEVELS - 1);
        // Thinking: the eyes are aside.
        expect(thinking.length).toBeGreaterThan(25);
        expect(
          share(thinking, ['left', 'right', 'left-raised', 'right-raised']),
        ).toBeGreaterThanOrEqual(0.8);

        await agent.disconnect();
        await viewer.disconnect();
        await stack.visage.call('DELETE', `/v1/sessions/${created.session_id}`);
      },
      150_000,
    );
  },
);
