// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { Room } from '@livekit/rtc-node';
import { AccessToken } from 'livekit-server-sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import { decodePhotoBuild, photoThreadPool } from '../../../src/media/photo/index.js';
import {
  avatarAtlasAsync,
  unpackAtlas,
  type AvatarAtlas,
} from '../../../src/media/render/index.js';
import { AGENT_STATE_ATTRIBUTE } from '../../../src/media/room/agentStateWatcher.js';
import { describeWebRtc } from '../../support/network.js';
import { astronaut, multipartImage } from '../../support/portraits.js';
import { between, describeLooks, EyeViewer, fastestDrop, NOD_DROP_PX, share } from './faceLooks.js';
import { startMediaStack, type MediaStack } from './mediaStack.js';

async function waitFor(what: () => boolean, label: string, timeoutMs = 20_000): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!what()) {
    if (performance.now() > until) throw new Error(`timed out waiting for ${label}`);
    await sleep(50);
  }
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
      await photoThreadPool().close();
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
        const roomName = `listening-${Date.now()}`;
        const agentIdentity = `agent-listens-${kind.length}`;
        const created = await stack.create(avatarId, {
          room_name: roomName,
          publish_on_behalf: agentIdentity,
        });
        const viewer = new EyeViewer(atlas);
        await viewer.join(created.livekit_url, created.participant_token);

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

        await waitFor(() => viewer.received > 25, 'the first second of video');
        await setState('listening');
        await sleep(800);
        const listenFrom = viewer.now();
        await userSaid('I would like to book a table for two.', 'SG_1');
        await sleep(3_000);
        const askedAt = viewer.now();
        await userSaid('Do you have anything at eight?', 'SG_2');
        await sleep(2_000);
        const turnEndedAt = viewer.now();
        await setState('thinking');
        await sleep(4_500);
        const thinkingUntil = viewer.now();
        await setState('speaking');
        await sleep(300);

        const seen = viewer.seen();
        const listening = between(seen, listenFrom, askedAt);
        const asked = between(seen, askedAt, askedAt + 1_800);
        const nod = between(seen, turnEndedAt, turnEndedAt + 1_500);
        const thinking = between(seen, turnEndedAt + 1_500, thinkingUntil);
        console.log(
          [
            `${kind}:`,
            `listening (a statement heard): ${describeLooks(listening)}`,
            `after the question: ${describeLooks(asked)}`,
            `turn ended (listening -> thinking): ${describeLooks(nod)}`,
            `thinking: ${describeLooks(thinking)}`,
          ].join('\n'),
        );

        expect(listening.length).toBeGreaterThan(25);
        // Eyes on the viewer, brows at rest (a statement is no question), no nod.
        expect(share(listening, ['center', 'closed'])).toBeGreaterThanOrEqual(0.9);
        expect(fastestDrop(listening)).toBeLessThan(2);
        // The question lifts the brows.
        expect(asked.filter((f) => f.look === 'center-raised').length).toBeGreaterThanOrEqual(8);
        // The end of the turn: the head goes down (the whole breath range, 3 px, within 400 ms;
        // at least NOD_DROP_PX of it seen, which breathing cannot do).
        expect(fastestDrop(nod)).toBeGreaterThanOrEqual(NOD_DROP_PX);
        // Thinking: the eyes are aside.
        expect(thinking.length).toBeGreaterThan(25);
        const aside = ['left', 'right', 'left-raised', 'right-raised'] as const;
        expect(share(thinking, [...aside, 'closed'])).toBeGreaterThanOrEqual(0.8);
        expect(share(thinking, aside)).toBeGreaterThan(0.6);

        await agent.disconnect();
        await viewer.leave();
        await stack.visage.call('DELETE', `/v1/sessions/${created.session_id}`);
      },
      150_000,
    );
  },
);
