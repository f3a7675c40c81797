// SPDX-License-Identifier: GPL-3.0-or-later
// The agent is no viewer of its own avatar (issue 47): an agent connected as `ctx.connect()`
// connects it (every track of every participant subscribed) would otherwise keep the avatar's
// video on while no user watches it. Through the embedded LiveKit server (dynacast as LiveKit
// does it, its waits cut short), a Visage server whose avatar really joins, and the plugin.
import { dispose, Room, TrackKind } from '@livekit/rtc-node';
import { AccessToken } from 'livekit-server-sdk';
import { afterAll, expect, it } from 'vitest';
import { AvatarSession } from '@visage-avatar/livekit-plugin';
import { tokenize } from '@livekit/agents';
import type { PublishedTrack } from '../../src/devserver/rtc/publishedTrack.js';
import { startMediaStack, type MediaStack } from '../media/room/mediaStack.js';
import { describeWebRtc } from '../support/network.js';
import { agent, agentSession, sleep, until } from './agentHarness.js';
import { Frontend } from './frontend.js';
import { MILO } from './pluginHarness.js';

describeWebRtc("the agent and its avatar's tracks", (address) => {
  let stack: MediaStack;
  const cleanups: Array<() => Promise<unknown>> = [];

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await stack?.close();
    await dispose();
  }, 120_000);

  /** Video packets the server got from the avatar over `ms`. */
  async function videoPackets(track: PublishedTrack, ms: number): Promise<number> {
    const before = track.packetsReceived;
    await sleep(ms);
    return track.packetsReceived - before;
  }

  it('leaves the avatar unwatched until a user joins, though the agent subscribes to everything', async () => {
    stack = await startMediaStack(address, {
      cap: 2,
      rooms: { dynacast: { initialWaitMs: 1500, pauseDelayMs: 1000 } },
    });
    const roomName = 'agent-not-a-viewer';
    const token = new AccessToken('devkey', stack.apiSecret, { identity: `agent-${roomName}` });
    token.kind = 'agent';
    token.addGrant({ room: roomName, roomJoin: true, canPublish: true, canSubscribe: true });
    // As `ctx.connect()` connects an agent: every track of every participant subscribed.
    const room = new Room();
    await room.connect(stack.livekit.url, await token.toJwt(), {
      autoSubscribe: true,
      dynacast: false,
    });
    cleanups.push(() => room.disconnect());
    const sut = agentSession([]);
    cleanups.push(() => sut.close());
    const avatar = new AvatarSession({
      avatarId: MILO,
      apiKey: stack.visage.secret,
      apiUrl: stack.visage.url,
      sentenceTokenizer: new tokenize.basic.SentenceTokenizer({ minSentenceLength: 1 }),
      parkAfterSeconds: null,
      connOptions: { maxRetry: 3, retryIntervalMs: 2_000, timeoutMs: 60_000 },
    });
    cleanups.push(() => avatar.aclose());
    await avatar.start(sut.session, room, { livekitUrl: stack.livekit.url });
    await avatar.waitForJoin({ timeout: 60_000 });
    await sut.session.start({ agent: agent(), room });

    // The agent sees both of the avatar's tracks published, and is subscribed to neither.
    const published = () =>
      [...(room.remoteParticipants.get(avatar.avatarIdentity)?.trackPublications.values() ?? [])]
        .map((p) => `${p.kind === TrackKind.KIND_VIDEO ? 'video' : 'audio'}:${p.subscribed}`)
        .sort();
    await until(
      () => published().join() === 'audio:false,video:false',
      20_000,
      `the agent unsubscribed from both tracks (${published().join()})`,
    );

    // Nobody else in the room: the server's dynacast pauses the avatar's video.
    const serverRoom = stack.livekit.rooms.get(roomName)!;
    const video = [...serverRoom.participant(avatar.avatarIdentity)!.tracks.values()].find(
      (t) => t.isVideo,
    )!;
    await expect.poll(() => videoPackets(video, 1000), { timeout: 20_000, interval: 0 }).toBe(0);
    expect(await videoPackets(video, 2000)).toBe(0);

    // A user joins: the video comes back for them.
    const user = new AccessToken('devkey', stack.apiSecret, { identity: `user-${roomName}` });
    user.addGrant({ room: roomName, roomJoin: true, canSubscribe: true });
    const frontend = new Frontend();
    cleanups.push(() => frontend.leave());
    await frontend.join(stack.livekit.url, await user.toJwt());
    await frontend.waitForTracks(60_000);
    await expect
      .poll(() => videoPackets(video, 1000), { timeout: 20_000, interval: 0 })
      .toBeGreaterThan(10);
  }, 180_000);
});
