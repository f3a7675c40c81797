// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import type { LiveKitMediaSession } from '../../../src/media/session/liveKitMediaSession.js';
import type { PublishedTrack } from '../../../src/devserver/rtc/publishedTrack.js';
import { describeWebRtc } from '../../support/network.js';
import { AvatarClient } from './avatarClient.js';
import { startMediaStack, type CreatedSession, type MediaStack } from './mediaStack.js';

/**
 * An avatar nobody watches neither renders nor encodes: the embedded server tells it (dynacast,
 * SubscribedQualityUpdate) that nobody subscribes to its video, as LiveKit does, and it stops
 * drawing frames; its encoder sends nothing. A viewer who arrives gets video at once and at full
 * rate, the first viewer (whom LiveKit announces to the publisher) and a later one (whom it does
 * not) alike. The server's delays are cut from LiveKit's 10 s / 5 s to keep the test short.
 */
describeWebRtc('an unwatched avatar', (address) => {
  let stack: MediaStack;
  afterAll(() => stack?.close());

  /** What the avatar renders, and what its video sends the server, over `ms`. */
  async function activity(session: LiveKitMediaSession, video: PublishedTrack, ms: number) {
    const frames = session.framesRendered;
    const packets = video.packetsReceived;
    await sleep(ms);
    return { frames: session.framesRendered - frames, packets: video.packetsReceived - packets };
  }

  /** Waits (bounded) until a whole second passes with nothing rendered. */
  async function untilIdle(session: LiveKitMediaSession, video: PublishedTrack) {
    await expect
      .poll(async () => (await activity(session, video, 1000)).frames, {
        timeout: 20_000,
        interval: 0,
      })
      .toBe(0);
  }

  /** A viewer joins with the participant token: ms to its first frame, then frames in 2 s. */
  async function view(created: CreatedSession) {
    const client = new AvatarClient();
    const joinAt = client.now();
    await client.join(created.livekit_url, created.participant_token);
    await client.waitFor(() => client.video.length > 0, 10_000, 'a first video frame');
    const firstFrameMs = client.video[0]!.atMs - joinAt;
    const from = client.now();
    await sleep(2000);
    const fps = client.framesMadeBetween(from, from + 2000).length / 2;
    return { client, firstFrameMs, fps };
  }

  it('renders and encodes nothing while nobody watches, and serves a viewer at once', async () => {
    stack = await startMediaStack(address, {
      cap: 2,
      rooms: { dynacast: { initialWaitMs: 1500, pauseDelayMs: 1000 } },
    });
    const created = await stack.create(AVATAR_CATALOGUE[1]!.avatarId);
    const session = stack.media.running().get(created.session_id) as LiveKitMediaSession;
    const room = stack.livekit.rooms.get(created.room_name)!;
    const video = [...room.participant(created.agent_identity)!.tracks.values()].find(
      (t) => t.isVideo,
    )!;
    expect(session.framesRendered).toBeGreaterThan(0);

    // Nobody joined: after the server's wait, nothing is drawn and nothing reaches the server.
    await untilIdle(session, video);
    expect(await activity(session, video, 3000)).toEqual({ frames: 0, packets: 0 });

    // The avatar still speaks while unwatched (the audio and its timing go on).
    const speak = await stack.visage.call('POST', `/v1/sessions/${created.session_id}/speak`, {
      json: { text: 'Nobody is watching me yet.' },
    });
    expect(speak.status).toBeLessThan(300);

    // The first viewer (LocalTrackSubscribed tells the publisher).
    const first = await view(created);
    console.log(`first viewer: first frame ${Math.round(first.firstFrameMs)} ms, ${first.fps} fps`);
    expect(first.firstFrameMs).toBeLessThan(5000);
    expect(first.fps).toBeGreaterThanOrEqual(15);
    await first.client.leave();

    // Gone again: the avatar stops once more.
    await untilIdle(session, video);
    expect(await activity(session, video, 2000)).toEqual({ frames: 0, packets: 0 });

    // A later viewer: LiveKit tells the publisher of the first subscriber only; dynacast's
    // update is what brings the video back.
    const second = await view(created);
    console.log(
      `second viewer: first frame ${Math.round(second.firstFrameMs)} ms, ${second.fps} fps`,
    );
    expect(second.firstFrameMs).toBeLessThan(5000);
    expect(second.fps).toBeGreaterThanOrEqual(15);
    await second.client.leave();
  }, 120_000);
});
