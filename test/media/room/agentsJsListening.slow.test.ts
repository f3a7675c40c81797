// SPDX-License-Identifier: GPL-3.0-or-later
// The listening life with a real LiveKit Agents session: agents-js's RoomIO sets `lk.agent.state`
// on the agent's participant, the plugin's AvatarSession puts a Visage avatar into the room, and
// a viewer watches the avatar's eyes and head.
import { tokenize } from '@livekit/agents';
import { dispose, Room } from '@livekit/rtc-node';
import { AccessToken } from 'livekit-server-sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { avatarAtlasAsync } from '../../../src/media/render/index.js';
import { AGENT_STATE_ATTRIBUTE } from '../../../src/media/room/agentStateWatcher.js';
import { AvatarSession } from '@visage-avatar/livekit-plugin';
import { agent, agentSession, sleep, until } from '../../plugin/agentHarness.js';
import { MILO } from '../../plugin/pluginHarness.js';
import { describeWebRtc } from '../../support/network.js';
import { between, describeLooks, EyeViewer, fastestDrop, NOD_DROP_PX, share } from './faceLooks.js';
import { startMediaStack, type MediaStack } from './mediaStack.js';

describeWebRtc("an agents-js AgentSession drives the avatar's listening life", (address) => {
  let stack: MediaStack;
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    stack = await startMediaStack(address, { cap: 4 });
  }, 60_000);

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await stack?.close();
    await dispose();
  }, 120_000);

  let attempt = 0;

  // One retry: on a loaded machine the viewer can receive too few frames of the agent's short
  // turn to see the nod's 160 ms fall (CI: 18 frames, the head's fastest drop 1 px). A missing
  // nod fails both tries. A try starts from a new room; the last try's parts are closed first.
  it(
    'looks at the viewer while the agent listens, and nods as it takes its turn (listening -> thinking)',
    {
      timeout: 150_000,
      retry: 1,
    },
    async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
      const roomName = `agents-js-listening-${++attempt}`;
      const agentIdentity = `agent-${roomName}`;
      // An agent's job token may update its own attributes (LiveKit grants it to agent workers).
      const token = new AccessToken(stack.apiKey, stack.apiSecret, { identity: agentIdentity });
      token.kind = 'agent';
      token.addGrant({
        room: roomName,
        roomJoin: true,
        canPublish: true,
        canSubscribe: true,
        canUpdateOwnMetadata: true,
      });
      const room = new Room();
      await room.connect(stack.livekit.url, await token.toJwt(), {
        autoSubscribe: true,
        dynacast: false,
      });
      cleanups.push(() => room.disconnect());
      const sut = agentSession([{ input: 'hi', content: 'Hello there. It is good to see you.' }]);
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
      await sut.session.start({
        agent: agent(),
        room,
        outputOptions: { syncTranscription: false },
      });

      const viewer = new EyeViewer(await avatarAtlasAsync(MILO));
      cleanups.push(() => viewer.leave());
      const user = new AccessToken(stack.apiKey, stack.apiSecret, { identity: `user-${roomName}` });
      user.addGrant({ room: roomName, roomJoin: true, canSubscribe: true });
      await viewer.join(stack.livekit.url, await user.toJwt());
      await until(() => viewer.received > 25, 60_000, 'the first second of video');
      const agentState = () =>
        viewer.room.remoteParticipants.get(agentIdentity)?.attributes[AGENT_STATE_ATTRIBUTE];
      await until(() => agentState() === 'listening', 20_000, 'the agent listening');
      await sleep(500);
      const listenFrom = viewer.now();
      await sleep(3_000);
      const replyAt = viewer.now();
      await sut.session.run({ userInput: 'hi' }).wait();
      await sleep(300);

      const seen = viewer.seen();
      const listening = between(seen, listenFrom, replyAt);
      // Until the end: on a loaded machine the nod may reach the viewer a while after the turn ended.
      const reply = between(seen, replyAt, Infinity);
      console.log(
        [
          `agent states: ${sut.states.map((s) => s.state).join(' -> ')}`,
          `listening: ${describeLooks(listening)}`,
          `the agent's turn: ${describeLooks(reply)}`,
        ].join('\n'),
      );
      expect(sut.states.map((s) => s.state)).toEqual(
        expect.arrayContaining(['listening', 'thinking', 'speaking']),
      );
      expect(listening.length).toBeGreaterThan(25);
      expect(share(listening, ['center', 'closed'])).toBeGreaterThanOrEqual(0.9);
      expect(fastestDrop(listening)).toBeLessThan(2);
      expect(fastestDrop(reply)).toBeGreaterThanOrEqual(NOD_DROP_PX);
    },
  );
});
