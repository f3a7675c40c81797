// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { AudioFrame, Room } from '@livekit/rtc-node';
import { initializeLogger, voice } from '@livekit/agents';
import { AccessToken } from 'livekit-server-sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { resample } from '../../../src/media/audio/index.js';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import {
  espeakRuntime,
  stockVoiceProfile,
  synthesizeWithEspeak,
} from '../../../src/media/tts/index.js';
import { describeWebRtc } from '../../support/network.js';
import { startMediaStack, type MediaStack } from './mediaStack.js';

const AVATAR = AVATAR_CATALOGUE[1]!;
const TEXT =
  'Maybe my mother bought a big blue map, but please pay me back by Monday. Mom bought more boots.';

/**
 * An agent that brings its own TTS (agents-js `DataStreamAudioOutput`, `lk.audio_stream`) and
 * publishes its reply's transcript on `lk.transcription`, as agents-js does, through real WebRTC:
 * the avatar aligns the words to the audio and closes the lips for m, b and p in the frames a
 * viewer receives. The same audio without its transcript, for comparison.
 */
describeWebRtc('audio mode: the words shape the mouth', (address) => {
  let stack: MediaStack;
  let speech: Int16Array;

  beforeAll(async () => {
    stack = await startMediaStack(address);
    const runtime = await espeakRuntime();
    const s = synthesizeWithEspeak(
      runtime,
      TEXT,
      stockVoiceProfile('voice_Milo00000000000000000001')!.espeak,
    );
    const pcm = resample(s.pcm, s.sampleRate, 24_000);
    speech = Int16Array.from(pcm, (v) => Math.round(Math.max(-1, Math.min(1, v)) * 32767));
  }, 60_000);

  afterAll(() => stack?.close());

  it('closes the lips for m, b and p in the received frames when the transcript comes', async () => {
    initializeLogger({ pretty: false, level: 'warn' });
    const roomName = `words-${Date.now()}`;
    const { session_id, client, agent_identity } = await stack.session(AVATAR.avatarId, {
      room_name: roomName,
      publish_on_behalf: 'agent-1',
    });
    const at = new AccessToken('devkey', stack.apiSecret, { identity: 'agent-1' });
    at.kind = 'agent';
    at.addGrant({ roomJoin: true, room: roomName, canPublish: true, canSubscribe: true });
    const agentRoom = new Room();
    await agentRoom.connect(stack.livekit.url, await at.toJwt(), {
      autoSubscribe: false,
      dynacast: false,
    });
    // One output per agent process: agents-js registers its playback RPCs once, on the first room.
    const output = new voice.DataStreamAudioOutput({
      room: agentRoom,
      destinationIdentity: agent_identity,
      sampleRate: 24_000,
    });
    let finished = 0;
    output.on('playbackFinished', () => finished++);
    await sleep(800);
    const idle = client.framesBetween(client.now() - 600, client.now()).map((f) => f.mouth);

    /** Share of the frames received while the reply was heard that show closed lips. */
    async function reply(withTranscript: boolean): Promise<number> {
      const from = client.now();
      if (withTranscript) {
        // As agents-js's RoomIO publishes the reply (transcription not synchronized: the text
        // comes as the LLM writes it, ahead of the audio).
        const writer = await agentRoom.localParticipant!.streamText({
          topic: 'lk.transcription',
          attributes: { 'lk.segment_id': 'SG_reply2', 'lk.transcription_final': 'false' },
        });
        const words = TEXT.split(' ');
        for (let i = 0; i < words.length; i++) await writer.write((i ? ' ' : '') + words[i]);
        await writer.close();
      }
      const before = finished;
      for (let i = 0; i < speech.length; i += 240) {
        const data = speech.slice(i, i + 240);
        await output.captureFrame(new AudioFrame(data, 24_000, 1, data.length));
      }
      output.flush();
      await client.waitFor(() => finished > before, 20_000, 'playback_finished');
      await sleep(300);
      // The frames received while the speech was heard: from its first loud audio to its last.
      const loud = client.audioBetween(from, client.now()).filter((a) => a.rms > 500);
      const frames = client.framesBetween(loud[0]!.atMs, loud.at(-1)!.atMs);
      const closed = frames.filter((f) => f.mouth <= Math.max(...idle) + 0.01).length;
      return closed / frames.length;
    }

    const alone = await reply(false);
    const words = await reply(true);
    console.log(
      `frames with closed lips while speaking: ${(words * 100).toFixed(1)} % with the transcript, ` +
        `${(alone * 100).toFixed(1)} % from the audio alone`,
    );
    await agentRoom.disconnect();
    await stack.visage.call('DELETE', `/v1/sessions/${session_id}`);
    expect(words).toBeGreaterThan(0.05);
    expect(words).toBeGreaterThan(alone + 0.05);
  }, 120_000);
});
