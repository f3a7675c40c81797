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
import { forgetPlaybackRpcs } from '../../support/agentsPlaybackRpcs.js';
import { describeWebRtc } from '../../support/network.js';
import { startMediaStack, type MediaStack } from './mediaStack.js';

const AVATAR = AVATAR_CATALOGUE[1]!;
const SENTENCES =
  'Maybe my mother bought a big blue map, but please pay me back by Monday. Mom bought more boots.';
/**
 * Three times over (some 15 s): realigning all the audio so far costs more as the reply goes on,
 * a tail at a time does not.
 */
const TEXT = [SENTENCES, SENTENCES, SENTENCES].join(' ');

/**
 * An agent that brings its own TTS (agents-js `DataStreamAudioOutput`, `lk.audio_stream`) and
 * publishes its reply's transcript on `lk.transcription`, as agents-js does, through real WebRTC:
 * the avatar aligns the words to the audio and closes the lips for m, b and p in the frames a
 * viewer receives. The same audio without its transcript, for comparison. The audio comes at real
 * time in 10 ms frames (a streaming TTS), where the words must be placed within some tens of ms
 * of their audio's arrival, and in 100 ms frames ahead of playout (a reply synthesized ahead).
 */
describeWebRtc('audio mode: the words shape the mouth', (address) => {
  let stack: MediaStack;
  let speech: Int16Array;
  /** The middles of the speech's m, b and p (ms from its first loud 10 ms). */
  let bilabials: number[];

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
    let firstLoudMs = 0;
    for (let i = 0; i + 240 <= speech.length; i += 240) {
      let sum = 0;
      for (let j = i; j < i + 240; j++) sum += speech[j]! * speech[j]!;
      if (Math.sqrt(sum / 240) > 500) {
        firstLoudMs = (i / 24_000) * 1000;
        break;
      }
    }
    bilabials = s.phonemes
      .filter((p) => /^[mbp]/.test(p.ipa))
      .map((p) => (p.startMs + p.endMs) / 2 - firstLoudMs);
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
    forgetPlaybackRpcs();
    const output = new voice.DataStreamAudioOutput({
      room: agentRoom,
      destinationIdentity: agent_identity,
      sampleRate: 24_000,
    });
    let finished = 0;
    output.on('playbackFinished', () => finished++);
    await sleep(800);
    // The resting mouth, from frames received (a busy machine may not have sent any yet).
    await client.waitFor(
      () => client.framesBetween(client.now() - 600, client.now()).length >= 5,
      20_000,
      'video frames',
    );
    const idle = client.framesBetween(client.now() - 600, client.now()).map((f) => f.mouth);

    /**
     * Share of the speech's m, b and p for which a frame shows closed lips between open ones
     * within 100 ms of when the viewer heard it. Frames and audio are placed on the stream's own timelines (render time,
     * samples played), not by when a busy test process was handed them.
     */
    let replies = 0;
    async function reply(withTranscript: boolean, realTime: boolean): Promise<number> {
      replies++;
      const from = client.now();
      if (withTranscript) {
        // As agents-js's RoomIO publishes the reply (transcription not synchronized: the text
        // comes as the LLM writes it, ahead of the audio).
        const writer = await agentRoom.localParticipant!.streamText({
          topic: 'lk.transcription',
          attributes: { 'lk.segment_id': `SG_reply${replies}`, 'lk.transcription_final': 'false' },
        });
        const words = TEXT.split(' ');
        for (let i = 0; i < words.length; i++) await writer.write((i ? ' ' : '') + words[i]);
        await writer.close();
      }
      const before = finished;
      // In 100 ms frames as fast as they come, as agents-js's TTS plugins hand over a reply
      // synthesized ahead (AudioByteStream's default); or in 10 ms frames at real time, as a
      // streaming TTS pushes them: the words then have no head start on the audio.
      const frame = realTime ? 240 : 2400;
      const feedFrom = performance.now();
      for (let i = 0; i < speech.length; i += frame) {
        if (realTime) {
          const due = feedFrom + (i / 24_000) * 1000 - performance.now();
          if (due > 0) await sleep(due);
        }
        const data = speech.slice(i, i + frame);
        await output.captureFrame(new AudioFrame(data, 24_000, 1, data.length));
      }
      output.flush();
      await client.waitFor(() => finished > before, 60_000, 'playback_finished');
      await sleep(300);
      // The audio's offset from this reply's own samples: a feed at real time can leave gaps that
      // the samples played do not count, so an earlier reply's offset no longer holds.
      const heard = client.audioBetween(from, client.now());
      const audioOffset = Math.min(...heard.map((a) => a.atMs - a.playoutMs));
      const loud = heard.find((a) => a.rms > 500)!;
      const heardFrom = loud.playoutMs + audioOffset;
      const videoOffset = Math.min(...client.video.map((v) => v.atMs - v.renderMs));
      const made = client
        .framesMadeBetween(from, client.now())
        .map((f) => ({ t: f.renderMs + videoOffset, mouth: f.mouth }));
      const closed = Math.max(...idle) + 0.01;
      const open = Math.max(...idle) + 0.03;
      // A closure between sounds: closed lips with open ones within 300 ms before and after. A
      // pause, where the mouth rests closed, does not count: audio that comes with gaps (a busy
      // machine) closes the mouth in them whatever the words, near m, b and p by chance.
      const closures = made
        .filter(
          (f) =>
            f.mouth <= closed &&
            made.some((o) => o.mouth >= open && o.t < f.t && o.t >= f.t - 300) &&
            made.some((o) => o.mouth >= open && o.t > f.t && o.t <= f.t + 300),
        )
        .map((f) => f.t);
      const hit = bilabials.filter((b) =>
        closures.some((t) => Math.abs(t - (heardFrom + b)) <= 100),
      );
      return hit.length / bilabials.length;
    }

    const alone = await reply(false, true);
    const words = await reply(true, true);
    const ahead = await reply(true, false);
    console.log(
      `m, b and p with closed lips (of ${bilabials.length}): audio at real time ` +
        `${(words * 100).toFixed(0)} % with the transcript, ${(alone * 100).toFixed(0)} % from the ` +
        `audio alone; audio ahead of playout ${(ahead * 100).toFixed(0)} % with the transcript`,
    );
    await agentRoom.disconnect();
    await stack.visage.call('DELETE', `/v1/sessions/${session_id}`);
    // Measured at real time, with the words against the audio alone, counting closures between
    // open frames: 83 % and 30 % (quiet), 71 % and 40 %, 67 % and 32 % beside two CPU hogs.
    // Counting every closed frame instead (pauses too), the hogs' runs read 70 % and 65 %: the
    // audio then comes with gaps, where the mouth rests closed whatever the words. Main's code,
    // which realigned all the audio every 300 ms, read 46 % on that looser count (load 5). Audio
    // ahead of playout: 87 % quiet, 67 to 76 % beside the hogs. In whole CI runs (2026-11-30):
    // 49 % at real time against 30 % alone, 54 % ahead; and at load 13, 5 % ahead (the
    // alignment, held to a fifth of the event loop, falls behind a reply that comes at once).
    // The bounds say the words help at all, on a loaded machine; the figures above are the goal.
    expect(words).toBeGreaterThan(0.4);
    expect(words).toBeGreaterThan(alone + 0.1);
    expect(ahead).toBeGreaterThan(0.3);
  }, 300_000);
});
