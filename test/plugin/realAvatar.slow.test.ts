// SPDX-License-Identifier: GPL-3.0-or-later
// The plugin against the real media core: the embedded LiveKit server, a Visage server whose
// avatar really joins the agent's room and speaks with espeak-ng, the agent connected to that
// room with rtc-node, and a frontend participant listening to what the avatar publishes.
import { dispose, Room, TrackKind } from '@livekit/rtc-node';
import { AccessToken } from 'livekit-server-sdk';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { DevServer } from '../../src/devserver/index.js';
import {
  AvatarSession,
  VisageAudioStreamOutput,
  type AvatarSessionOptions,
} from '@visage-avatar/livekit-plugin';
import { tokenize, type tts } from '@livekit/agents';
import { ToneTTS } from './toneTts.js';
import { Frontend } from './frontend.js';
import { startMediaStack, type MediaStack } from '../media/room/mediaStack.js';
import type { TestServer } from '../server/testServer.js';
import { forgetPlaybackRpcs } from '../support/agentsPlaybackRpcs.js';
import { describeWebRtc } from '../support/network.js';
import { agent, agentSession, sleep, until, type SessionUnderTest } from './agentHarness.js';
import { MILO } from './pluginHarness.js';

const SILENCE_RMS = 50;
const SPEECH_RMS = 300;

describeWebRtc('the plugin with a real avatar (WebRTC through the embedded server)', (address) => {
  let stack: MediaStack;
  let livekit: DevServer;
  let visage: TestServer;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    stack = await startMediaStack(address, { cap: 10, agentAbsenceMs: 5_000 });
    ({ livekit, visage } = stack);
  }, 60_000);

  // Each test's agent, avatar and frontend leave their rooms when it ends. Left to the end of the
  // file, they piled up (six idle avatars rendering and sending, six frontends receiving by the
  // last test), and this process's event loop slowed test after test: with two CPU hogs beside
  // it, its delay went from p50 20 / p99 71 ms in the first test to 115 / 682 ms in the last;
  // cleaned up per test it stays at about 20 / 43-129 ms. In a loaded full run the last test's
  // own connect then failed with `handle not found (ReadyForRoomEvent)`: rtc-node drops a room
  // whose connect callback the process has not answered in time (a 14 s stall passed, 20 s not).
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  }, 120_000);

  afterAll(async () => {
    await stack?.close();
    await dispose();
  }, 120_000);

  /** The agent in its room, an AvatarSession started in it, and a frontend listening. */
  async function startAgent(
    roomName: string,
    responses: Array<{ input: string; content: string }> = [],
    options: {
      roomIO?: { syncTranscription: boolean };
      avatar?: Partial<AvatarSessionOptions>;
      tts?: tts.TTS;
      withVad?: boolean;
    } = {},
  ): Promise<
    SessionUnderTest & {
      avatar: AvatarSession;
      room: Room;
      frontend: Frontend;
      metrics: Array<Record<string, unknown>>;
      startedAt: number;
    }
  > {
    const token = new AccessToken('devkey', stack.apiSecret, { identity: `agent-${roomName}` });
    token.kind = 'agent';
    token.addGrant({ room: roomName, roomJoin: true, canPublish: true, canSubscribe: true });
    const room = new Room();
    await room.connect(livekit.url, await token.toJwt(), { autoSubscribe: true, dynacast: false });
    cleanups.push(() => room.disconnect());
    const sut = agentSession(responses, { withVad: options.withVad });
    if (options.tts) sut.session.tts = options.tts;
    const audioMode = options.avatar?.mode === 'audio';
    const avatar = new AvatarSession({
      avatarId: MILO,
      apiKey: visage.secret,
      apiUrl: visage.url,
      ...(audioMode
        ? {}
        : { sentenceTokenizer: new tokenize.basic.SentenceTokenizer({ minSentenceLength: 1 }) }),
      parkAfterSeconds: null,
      // Generous: on a loaded machine the create (the avatar joining and publishing) is slow.
      connOptions: { maxRetry: 3, retryIntervalMs: 2_000, timeoutMs: 60_000 },
      ...options.avatar,
    });
    cleanups.push(() => avatar.aclose());
    const metrics: Array<Record<string, unknown>> = [];
    avatar.on('metrics_collected', (m) => metrics.push({ ...m }));
    cleanups.push(() => sut.close());
    const startedAt = Date.now();
    await avatar.start(sut.session, room, { livekitUrl: livekit.url });
    await avatar.waitForJoin({ timeout: 60_000 });
    // Without roomIO the session runs roomless (text input only); with it, as in production.
    if (options.roomIO) {
      await sut.session.start({
        agent: agent(),
        room,
        outputOptions: { syncTranscription: options.roomIO.syncTranscription },
      });
    } else {
      await sut.session.start({ agent: agent() });
    }
    const frontend = new Frontend();
    cleanups.push(() => frontend.leave());
    const user = await (async () => {
      const t = new AccessToken('devkey', stack.apiSecret, { identity: `user-${roomName}` });
      t.addGrant({ room: roomName, roomJoin: true, canSubscribe: true });
      return t.toJwt();
    })();
    await frontend.join(livekit.url, user);
    // Generous: on a loaded machine joining and the first frames can take tens of seconds.
    await frontend.waitForTracks(60_000);
    return { ...sut, avatar, room, frontend, metrics, startedAt };
  }

  it('speaks a reply in the agent room: ordered finals, speaking until the audio ends, one message', async () => {
    const reply = 'Hello from the avatar. This is the second sentence.';
    const s = await startAgent('plugin-real-reply', [{ input: 'hi', content: reply }]);
    const participant = s.room.remoteParticipants.get(s.avatar.avatarIdentity);
    expect(participant?.attributes['lk.publish_on_behalf']).toBe('agent-plugin-real-reply');

    await s.session.run({ userInput: 'hi' }).wait();
    // The agent gets the last final at the same moment as the frontend, give or take a packet.
    await until(() => s.frontend.finals().length >= 2, 2_000, 'the frontend to get both finals');
    const finals = s.frontend.finals().map((m) => m.text);
    expect(finals).toEqual(['Hello from the avatar.', 'This is the second sentence.']);
    const messages = s.assistantMessages();
    expect(messages.map((m) => m.textContent)).toEqual([reply]);
    expect(messages[0]!.interrupted).toBe(false);

    // The avatar's audio: loud while the agent was `speaking`, which ended with the speech.
    const speaking = s.states.find((x) => x.state === 'speaking')!.at;
    const listening = s.states.find((x) => x.at > speaking && x.state === 'listening')!.at;
    const f = s.frontend;
    expect(f.rmsBetween(f.fromEpoch(speaking) + 200, f.fromEpoch(listening) - 200)).toBeGreaterThan(
      SPEECH_RMS,
    );
    expect(listening - speaking).toBeGreaterThan(1_500);
    // The base class's avatar metrics: the join (waitForJoin) and the playback latency.
    const joined = s.metrics.find((m) => m.avatarJoinedAt !== undefined);
    expect(joined).toMatchObject({ type: 'avatar_metrics', metadata: { modelProvider: 'visage' } });
    // Timed from the real start: the identity was named before the session was created, so the
    // clock started before the service created the session (not at a later super.start()).
    const created = (await (
      await visage.call('GET', `/v1/sessions/${s.avatar.sessionId}`)
    ).json()) as { created_at: string };
    expect(Number(joined!.sessionStartedAt)).toBeGreaterThanOrEqual(s.startedAt);
    expect(Number(joined!.sessionStartedAt)).toBeLessThanOrEqual(Date.parse(created.created_at));
    const latency = s.metrics.find((m) => m.playbackLatencyMs !== undefined);
    expect(latency?.playbackLatencyMs).toBeGreaterThan(0);
    expect(latency?.playbackLatencyMs).toBeLessThan(2_000);
    console.log(
      `avatar metrics: joined ${Number(joined!.avatarJoinedAt) - Number(joined!.sessionStartedAt)} ms after start, playback latency ${Math.round(Number(latency!.playbackLatencyMs))} ms`,
    );
    const thinking = s.states.find((x) => x.state === 'thinking')!.at;
    console.log(
      `text mode: thinking -> speaking (first /speak to the avatar's first lk.chat) ${speaking - thinking} ms`,
    );
    // Quiet once the reply is over, judged on the audio's own timeline (a loaded machine hands
    // this process the last words late, in a burst): of 1.5 s of audio received after the end,
    // the last 0.5 s is silent.
    const over = f.now();
    await until(() => f.audioMsSince(over) >= 1_500, 30_000, 'audio after the reply');
    expect(f.rmsOfLastAudio(500)).toBeLessThan(SILENCE_RMS);
  }, 150_000);

  it('interrupted mid-reply: the avatar goes silent and only the heard prefix is committed', async () => {
    const reply =
      'This first sentence is spoken completely. The second sentence is much longer and ' +
      'will be cut off by the user before the avatar reaches its end. A third is never heard.';
    const s = await startAgent('plugin-real-interrupt', [{ input: 'go', content: reply }]);
    const handle = s.session.generateReply({ userInput: 'go' });
    await until(() => s.frontend.finals().length === 1, 20_000, 'the first sentence');
    // Cut once the second sentence is being heard (on a loaded machine it can start well after
    // the first one's final arrived).
    await until(
      () => s.frontend.chat.some((m) => !m.final && m.text.startsWith('The second')),
      20_000,
      'the second sentence',
    );
    const cutAt = s.frontend.now();
    await s.session.interrupt().await;
    await handle.waitForPlayout();
    expect(handle.interrupted).toBe(true);

    const message = s.assistantMessages().at(-1)!;
    expect(message.interrupted).toBe(true);
    await until(() => s.frontend.finals().length >= 2, 2_000, 'the cut final at the frontend');
    const heard = s.frontend
      .finals()
      .map((m) => m.text)
      .filter(Boolean)
      .join(' ');
    expect(message.textContent).toBe(heard);
    expect(heard.startsWith('This first sentence is spoken completely. The second')).toBe(true);
    expect(heard.length).toBeLessThan(reply.indexOf(' A third'));

    await sleep(3_000);
    const f = s.frontend;
    // Goes silent and stays silent (about 100 ms here; loose bound for a loaded CI machine).
    const silentAfter = quietFrom(f, cutAt);
    console.log(`text mode: silent ${silentAfter} ms after session.interrupt()`);
    expect(silentAfter).toBeDefined();
    expect(f.rmsBetween(cutAt + silentAfter!, f.now())).toBeLessThan(SILENCE_RMS);
    expect(s.frontend.chat.some((m) => m.text.includes('third'))).toBe(false);
    expect(s.session.agentState).toBe('listening');
  }, 150_000);

  for (const syncTranscription of [false, true]) {
    it(`runs inside the room (RoomIO, syncTranscription ${syncTranscription}): no agent audio track, interruptions commit the heard prefix`, async () => {
      const reply =
        'Welcome to the room, I am glad you are here. Now comes a long second sentence ' +
        'that the user will cut short well before the end. Never heard.';
      const s = await startAgent(
        `plugin-roomio-${syncTranscription}`,
        [{ input: 'hey', content: reply }],
        {
          roomIO: { syncTranscription },
        },
      );
      const handle = s.session.generateReply({ userInput: 'hey' });
      await until(() => s.frontend.finals().length === 1, 20_000, 'the first sentence');
      await until(
        () => s.frontend.chat.some((m) => !m.final && m.text.startsWith('Now comes')),
        20_000,
        'the second sentence',
      );
      await s.session.interrupt().await;
      await handle.waitForPlayout();
      await until(() => s.frontend.finals().length >= 2, 2_000, 'the cut final at the frontend');
      // The avatar is the agent's only voice: RoomIO published no track of its own.
      const agentTracks = [...s.room.localParticipant!.trackPublications.values()];
      expect(agentTracks).toEqual([]);
      const message = s.assistantMessages().at(-1)!;
      expect(message.interrupted).toBe(true);
      const text = message.textContent ?? '';
      const heard = s.frontend
        .finals()
        .map((m) => m.text)
        .filter(Boolean)
        .join(' ');
      if (!syncTranscription) {
        expect(text).toBe(heard);
      } else {
        // The framework's synchronizer replaces the avatar's report with its own estimate
        // (words paced at a standard speaking rate): a prefix of the reply near what was heard.
        console.log(`syncTranscription: committed ${text.length} chars, heard ${heard.length}`);
        expect(reply.startsWith(text)).toBe(true);
        expect(text.length).toBeGreaterThan(0);
      }
      expect(text.includes('Never heard')).toBe(false);
    }, 150_000);
  }

  // 150 s like the other tests here: in a fresh-clone CI run the avatar's video publication
  // stalled twice (rtc-node) and the plugin's retried creates took 58 s before the reply began.
  it("the agent's transcript follows the avatar word by word, stops where it was cut, shown once", async () => {
    const roomName = 'plugin-transcript';
    const reply =
      'Here is the first sentence of my answer, spoken word by word for you. Then a long ' +
      'second sentence that the user cuts short well before it can reach its end. Never heard.';
    const s = await startAgent(roomName, [{ input: 'hey', content: reply }], {
      roomIO: { syncTranscription: false },
    });
    const handle = s.session.generateReply({ userInput: 'hey' });
    await until(() => s.frontend.finals().length === 1, 20_000, 'the first sentence');
    await until(
      () => s.frontend.chat.some((m) => !m.final && m.text.startsWith('Then a long')),
      20_000,
      'the second sentence',
    );
    await s.session.interrupt().await;
    await handle.waitForPlayout();
    await until(() => s.frontend.finals().length >= 2, 5_000, 'the cut final at the frontend');
    const heard = s.frontend
      .finals()
      .map((m) => m.text)
      .filter(Boolean)
      .join(' ');
    const finalStreams = () => s.frontend.transcriptions.filter((t) => t.final && t.done);
    await until(() => finalStreams().length >= 2, 5_000, 'the final transcription streams');
    await sleep(500);

    // Attribution: everything comes from the avatar that publishes on the agent's behalf, about
    // its audio track, the way useVoiceAssistant pairs an avatar worker with its agent. Nothing
    // from the agent itself: its own immediate transcript is turned off (no duplicate).
    const avatar = s.frontend.room.remoteParticipants.get(s.avatar.avatarIdentity)!;
    expect(avatar.attributes['lk.publish_on_behalf']).toBe(`agent-${roomName}`);
    const audioSid = [...avatar.trackPublications.values()].find(
      (p) => p.kind === TrackKind.KIND_AUDIO,
    )?.sid;
    expect(audioSid).toBeTruthy();
    expect(s.frontend.transcriptions.length).toBeGreaterThan(0);
    for (const t of s.frontend.transcriptions) {
      expect(t.identity).toBe(s.avatar.avatarIdentity);
      expect(t.trackId).toBe(audioSid);
      expect(t.segmentId).toBeTruthy();
    }

    // Word by word: the first sentence's interim stream grew in many chunks as it was said,
    // with the avatar's audio arriving in between. Judged by the audio received in between
    // (sample count), not by arrival times: a starved test process receives both in bursts.
    // Text sent all at once would have next to no audio between its first and last chunk; paced
    // text has most of the sentence's 4 s. Under load the pacing is uneven (the landing CI of
    // stop 19 measured 840 ms, a loaded run since 150 ms), so the bar is what tells the two
    // apart, not the quiet figure.
    const first = s.frontend.transcriptions.find((t) => !t.final)!;
    expect(first.chunks.length).toBeGreaterThanOrEqual(5);
    const audioBetween =
      s.frontend.audioMsSince(first.chunks[0]!.atMs) -
      s.frontend.audioMsSince(first.chunks.at(-1)!.atMs);
    console.log(
      `transcript: ${Math.round(audioBetween)} ms of audio over the first interim's chunks`,
    );
    expect(audioBetween).toBeGreaterThan(100);
    // Each final stream closes its interim one under the same segment id.
    for (const f of finalStreams()) {
      expect(s.frontend.transcriptions.some((t) => !t.final && t.segmentId === f.segmentId)).toBe(
        true,
      );
    }

    // Stops where it was cut: the finals say exactly what was heard and what was committed.
    const transcript = finalStreams()
      .map((t) => t.text.trim())
      .filter(Boolean)
      .join(' ');
    expect(transcript).toBe(heard);
    expect(s.assistantMessages().at(-1)!.textContent).toBe(heard);
    // Where it was cut depends on how fast the interrupt lands: with other work on the machine it
    // once landed after the second sentence had ended (151 of 169 characters heard). What is
    // checked is that the transcript stops exactly where the avatar stopped, before the third.
    expect(transcript.includes('Never heard')).toBe(false);
  }, 150_000);

  it('audio mode: the agent keeps its TTS, its audio reaches the avatar (parked avatars resume first)', async () => {
    const tone = new ToneTTS();
    const s = await startAgent('plugin-audio-mode', [], {
      tts: tone,
      avatar: { mode: 'audio', parkAfterSeconds: 0.5 },
    });
    try {
      expect(s.session.tts).toBe(tone);
      expect(s.session.output.audio).toBeInstanceOf(VisageAudioStreamOutput);
      await expect
        .poll(async () => (await visageSession(s.avatar.sessionId!)).status, { timeout: 5_000 })
        .toBe('waiting');

      const f = s.frontend;
      const before = f.now();
      const handle = s.session.say('Hello in my own voice, a tone.');
      // Generous: under two CPU hogs the tone's first playback_started RPC took over 10 s.
      await until(() => s.session.agentState === 'speaking', 30_000, 'speaking');
      const speakingAt = f.now();
      await handle.waitForPlayout();
      const doneAt = f.now();
      expect(handle.interrupted).toBe(false);
      // 31 characters at 50 ms: about 1.5 s of tone, played out before the playout finished.
      expect(doneAt - speakingAt).toBeGreaterThan(1_000);
      expect(f.rmsBetween(speakingAt + 200, doneAt - 200)).toBeGreaterThan(SPEECH_RMS);
      expect(f.rmsBetween(before - 500, before)).toBeLessThan(SILENCE_RMS);
      expect(s.assistantMessages().map((m) => m.textContent)).toEqual([
        'Hello in my own voice, a tone.',
      ]);

      // Interrupting goes through lk.clear_buffer: the tone stops.
      const long = s.session.say(
        'A much longer tone that the user interrupts half way through it.',
      );
      await until(() => s.session.agentState === 'speaking', 30_000, 'speaking again');
      await sleep(800);
      const cutAt = f.now();
      await s.session.interrupt().await;
      await long.waitForPlayout();
      expect(long.interrupted).toBe(true);
      await sleep(3_000);
      // lk.clear_buffer is an RPC round trip, and the tone was streamed ahead of playout: the
      // behaviour checked is that it goes silent and stays silent (typically 200-400 ms here;
      // the bound is loose because a loaded CI machine stretches every step).
      const silentAfter = quietFrom(f, cutAt);
      console.log(`audio mode: silent ${silentAfter} ms after session.interrupt()`);
      expect(silentAfter).toBeDefined();
      expect(f.rmsBetween(cutAt + silentAfter!, f.now())).toBeLessThan(SILENCE_RMS);
    } finally {
      forgetPlaybackRpcs();
    }
  }, 150_000);

  it('20 turns with random barge-ins never leave the agent speaking or the avatar talking', async () => {
    let seed = Number(process.env.VISAGE_TEST_SEED ?? 7);
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const reply = (i: number) => `Reply ${i} starts here. And it ends right here.`;
    const s = await startAgent(
      'plugin-real-turns',
      Array.from({ length: 20 }, (_, i) => ({ input: `turn ${i}`, content: reply(i) })),
      { withVad: true },
    );
    const f = s.frontend;
    for (let i = 0; i < 20; i++) {
      const handle = s.session.generateReply({ userInput: `turn ${i}` });
      const roll = random();
      let cutAt: number | undefined;
      if (roll < 0.6) {
        // Seconds on a quiet machine; a starved one was seen to take 5 s from the speak to the
        // first audio handed to LiveKit.
        await until(
          () => s.session.agentState === 'speaking' || handle.done(),
          30_000,
          `turn ${i}`,
        );
        await sleep(random() * 1_500);
        cutAt = Date.now();
        if (roll < 0.3) {
          s.vad!.startOfSpeech();
          s.vad!.speaking(500);
          s.vad!.endOfSpeech(600);
        } else {
          await s.session.interrupt().await;
        }
      }
      const settled = await Promise.race([
        handle.waitForPlayout().then(() => 'done'),
        // Stuck means never: a reply plays in a few seconds, far longer only on a loaded machine.
        sleep(30_000).then(() => 'stuck'),
      ]);
      expect(settled, `turn ${i}`).toBe('done');
      // A cut turn ends well before the framework's own 5 s interruption watchdog would.
      if (cutAt !== undefined) expect(Date.now() - cutAt, `turn ${i}`).toBeLessThan(4_900);
      await until(() => s.session.agentState !== 'speaking', 2_000, `turn ${i} not speaking`);
    }
    // Nothing keeps talking once the conversation is over. Judged on the audio's own timeline:
    // the avatar's track carries audio all the time (silence when idle), and on a loaded machine
    // frames reach this process in bursts, so a quiet gap in arrival times is not the end (seen:
    // "quiet" for 400 ms, then 1.5 s later the rest of the last reply arrived). Once 5 s of audio
    // have come in after the conversation, its last 2.5 s must be quiet.
    await until(() => s.session.agentState === 'listening', 3_000, 'listening');
    const over = f.now();
    await until(() => f.audioMsSince(over) >= 5_000, 30_000, '5 s of audio after the end');
    expect(f.rmsOfLastAudio(2_500)).toBeLessThan(SILENCE_RMS);
    const messages = s.assistantMessages();
    for (const m of messages) {
      const text = m.textContent ?? '';
      const n = Number(/Reply (\d+)/.exec(text)?.[1] ?? -1);
      expect(reply(n).startsWith(text), text).toBe(true);
      if (!m.interrupted) expect(text).toBe(reply(n));
    }
  }, 300_000);

  async function visageSession(id: string) {
    const res = await visage.call('GET', `/v1/sessions/${id}`);
    return (await res.json()) as { status: string };
  }
});

/**
 * When, after `cutAt` (ms on the frontend's clock), the audio went quiet for good within 2.9 s:
 * the end of the last loud 100 ms window, so a gap in delivery on a loaded machine is not taken
 * for the end. Undefined when it is still loud at the end of the span.
 */
function quietFrom(f: { rmsBetween(from: number, to: number): number }, cutAt: number) {
  const loud = [...Array(29).keys()]
    .map((i) => i * 100)
    .filter((d) => f.rmsBetween(cutAt + d, cutAt + d + 100) >= SILENCE_RMS);
  const last = loud.at(-1);
  if (last === undefined) return 0;
  return last + 100 < 2_900 ? last + 100 : undefined;
}
