// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Speech latency per TTS engine: speak -> first audible audio at a WebRTC subscriber, and for
 * the cloning providers the same minus the provider's own first-chunk delay (set in the
 * protocol-faithful fakes of test/fakes), which is the overhead Visage adds (goal < 30 ms).
 * Beside them, LiveKit's own delivery with no Visage in the path (a plain participant publishing
 * the same speech the way the avatar does), and each engine's figure less both: what Visage itself
 * adds on top of what any LiveKit publisher pays.
 * Each engine is measured twice: with the measured session alone on the node, and while other
 * sessions speak now and then beside it (BENCH_TTS_OTHERS, default 2), as on a node that serves
 * others: on a machine that runs cold code slowly, the first figure pays for every path a speak
 * takes having been idle.
 * Visage runs as `visage dev` runs it: a node process with the API, the embedded LiveKit server
 * in its own process and a media process per core; the fakes, the subscriber and the plain
 * participant run in this process.
 * Run through `npm run bench` (inside the benchmark network namespace).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import diagnostics from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import {
  AudioFrame,
  AudioSource,
  dispose,
  LocalAudioTrack,
  Room,
  TrackPublishOptions,
  TrackSource,
} from '@livekit/rtc-node';
import { AccessToken } from 'livekit-server-sdk';
import { AVATAR_CATALOGUE } from '../src/media/avatarCatalogue.js';
import { AUDIO_FRAME_SAMPLES, AUDIO_QUEUE_MS, AUDIO_RATE } from '../src/media/room/index.js';
import { stopEspeakThread } from '../src/media/tts/index.js';
import { CartesiaFake } from '../test/fakes/cartesiaFake.js';
import { ElevenLabsFake } from '../test/fakes/elevenLabsFake.js';
import type { FakeProvider } from '../test/fakes/fakeProvider.js';
import { fakeSpeech } from '../test/fakes/fakeSpeech.js';
import { AvatarClient } from '../test/media/room/avatarClient.js';
import { startBenchNode, type BenchNode } from './support/benchNode.js';
import { median, recordFigures, rounds, summary } from './support/figures.js';

const address = process.env.VISAGE_TEST_ADDRESS;
if (!address) throw new Error('run through `npm run bench` (needs the namespace address)');
const ROUNDS = rounds();
/** The fakes' own time to first chunk, as a fast hosted provider's. */
const PROVIDER_FIRST_CHUNK_MS = 150;
const SENTENCE =
  'The avatar speaks this sentence so that we can measure how quickly its voice arrives.';
const AVATAR = AVATAR_CATALOGUE[0]!.avatarId;
const clip = new Uint8Array(readFileSync('test/fixtures/audio/voice-flite-rms-male.ogg'));
/** Media processes, one per core as under `visage dev`. */
const MEDIA_PROCESSES = availableParallelism();

/** The measured session's speak path, and when the client last wrote it to its socket. */
let measuredSpeakPath = '';
let speakWrittenAt = NaN;
diagnostics.channel('undici:client:sendHeaders').subscribe((message) => {
  const { request } = message as { request: { path: string } };
  if (request.path === measuredSpeakPath) speakWrittenAt = performance.now();
});

/**
 * Other sessions on the node in the second condition, each speaking a short sentence every 2.5
 * to 3.5 s (about half the time, as in a conversation), with no one watching them.
 */
const OTHER_SESSIONS = Number(process.env.BENCH_TTS_OTHERS ?? 2);
const OTHER_SENTENCE = 'Another session says a short thing.';

/** Speech above this RMS (16-bit) at the subscriber counts as audible. */
const AUDIBLE_RMS = 300;

/** The subscriber heard nothing above speech level in its last 300 ms of received audio. */
function quiet(client: AvatarClient): boolean {
  const recent = client.audio.filter((a) => a.atMs > client.now() - 300);
  return recent.length >= 20 && recent.every((a) => a.rms < 60);
}

/** When the subscriber first heard speech after `sinceMs` (its clock). */
async function audibleAfter(client: AvatarClient, sinceMs: number): Promise<number> {
  const heard = () => client.audio.find((a) => a.atMs > sinceMs && a.rms > AUDIBLE_RMS);
  await client.waitFor(() => heard() !== undefined, 10_000, 'audio');
  return heard()!.atMs;
}

/**
 * LiveKit's own delivery, with no Visage in the path: a plain participant in the avatar's room
 * publishes the fakes' speech through an AudioSource made as the avatar's is (same rate, queue and
 * frame size), and the same subscriber times its first audible audio from the moment the first
 * frame is handed over. Every publisher into LiveKit pays this once its audio exists: the
 * AudioSource's 10 ms pull, Opus framing, the network and the subscriber's jitter buffer. Its
 * rounds alternate with the avatar's, so both are measured on the same machine at the same load.
 */
class PlainPublisher {
  private constructor(
    private readonly room: Room,
    private readonly source: AudioSource,
    private readonly speech: Int16Array,
  ) {}

  static async join(node: BenchNode, roomName: string): Promise<PlainPublisher> {
    const { url, apiKey, apiSecret } = node.livekit;
    const at = new AccessToken(apiKey, apiSecret, { identity: 'plain-publisher' });
    at.addGrant({ roomJoin: true, room: roomName, canPublish: true, canSubscribe: false });
    const room = new Room();
    await room.connect(url, await at.toJwt(), { autoSubscribe: false, dynacast: false });
    const source = new AudioSource(AUDIO_RATE, 1, AUDIO_QUEUE_MS);
    await room.localParticipant!.publishTrack(
      LocalAudioTrack.createAudioTrack('speech', source),
      new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }),
    );
    return new PlainPublisher(room, source, (await fakeSpeech(SENTENCE, AUDIO_RATE)).pcm);
  }

  /** Says the sentence; first frame handed over -> audible at `client` (ms). */
  async deliver(client: AvatarClient): Promise<number> {
    await client.waitFor(() => quiet(client), 20_000, 'silence before speaking');
    const handedAt = client.now();
    let sending = Promise.resolve();
    for (let i = 0; i < this.speech.length; i += AUDIO_FRAME_SAMPLES) {
      const frame = this.speech.slice(i, i + AUDIO_FRAME_SAMPLES);
      sending = sending.then(() =>
        this.source.captureFrame(new AudioFrame(frame, AUDIO_RATE, 1, frame.length)),
      );
    }
    const ms = (await audibleAfter(client, handedAt)) - handedAt;
    await sending;
    await this.source.waitForPlayout();
    return ms;
  }

  leave(): Promise<void> {
    return this.room.disconnect();
  }
}

interface Row {
  /** The engine, and the other sessions speaking on the node meanwhile, if any. */
  label: string;
  speakToAudio: number[];
  providerDelayMs: number;
  /** LiveKit alone: a plain participant's audio, handed over -> audible (ms), round by round. */
  delivery: number[];
  /** speak -> first audible audio, stage by stage (ms). */
  stages: Record<Stage, number[]>;
}

const STAGES = [
  'client: the call -> the request on its socket',
  'network, API, session manager, hand-over to the media process',
  'waiting behind other utterances',
  "engine's first chunk (the provider's own delay included)",
  'resample + handed to the AudioSource',
  'AudioSource queue, Opus, network, jitter buffer (to audible)',
] as const;
type Stage = (typeof STAGES)[number];

/**
 * One engine, on a node of its own: first with the measured session alone on the node, then with
 * OTHER_SESSIONS more speaking now and then, so that the paths a speak takes have run lately.
 */
async function measure(
  engine: 'espeak' | 'cartesia' | 'elevenlabs',
  fake: FakeProvider | null,
  env: Record<string, string>,
): Promise<Row[]> {
  const node = await startBenchNode({
    address: address!,
    processes: MEDIA_PROCESSES,
    env: { VISAGE_TTS_ENGINE: engine, ...env },
  });
  try {
    const { visage } = node;
    let voiceId: string | undefined;
    if (fake) {
      const file = await visage.files.upload(new Blob([clip], { type: 'audio/ogg' }), 'me.ogg');
      voiceId = (await visage.voices.create({ name: 'Me', file_id: file.file_id })).voice_id;
    }
    const voice = voiceId ? { voice_id: voiceId } : {};
    const s = await visage.sessions.create({ avatar_id: AVATAR, mode: 'video', ...voice });
    measuredSpeakPath = `/v1/sessions/${s.session_id}/speak`;
    const client = new AvatarClient();
    await client.join(s.livekit_url, s.participant_token!);
    await client.waitFor(() => client.video.length > 0, 15_000, 'first video frame');
    const plain = await PlainPublisher.join(node, s.room_name);
    await sleep(800);

    /** ROUNDS of: LiveKit alone, then the avatar's speak -> audible, with its stages. */
    const rounds = async (label: string): Promise<Row> => {
      const speakToAudio: number[] = [];
      const delivery: number[] = [];
      const stages = Object.fromEntries(STAGES.map((stage) => [stage, []])) as unknown as Record<
        Stage,
        number[]
      >;
      for (let round = 0; round < ROUNDS; round++) {
        delivery.push(await plain.deliver(client));
        await client.waitFor(() => quiet(client), 20_000, 'silence before speaking');
        const sentAt = client.now();
        const { utterance_id } = await visage.sessions.speak(s.session_id, SENTENCE);
        const audibleAt = await audibleAfter(client, sentAt);
        speakToAudio.push(audibleAt - sentAt);
        await client.waitFor(
          () => client.finals().some((m) => m.utterance_id === utterance_id),
          30_000,
          'final',
        );
        const marks = await node.marks(utterance_id);
        if (marks) {
          // Epoch ms of client times (performance.now() based), comparable with the marks.
          const epochOf = (atMs: number) => performance.timeOrigin + client.t0 + atMs;
          const handedAt =
            marks.queued_at + marks.waited_ms + marks.first_chunk_ms + marks.handed_ms;
          const writtenAt = speakWrittenAt - client.t0;
          stages[STAGES[0]].push(writtenAt - sentAt);
          stages[STAGES[1]].push(marks.queued_at - epochOf(writtenAt));
          stages[STAGES[2]].push(marks.waited_ms);
          stages[STAGES[3]].push(marks.first_chunk_ms);
          stages[STAGES[4]].push(marks.handed_ms);
          stages[STAGES[5]].push(epochOf(audibleAt) - handedAt);
        }
        await sleep(300);
      }
      const providerDelayMs = fake ? PROVIDER_FIRST_CHUNK_MS : 0;
      return { label, speakToAudio, providerDelayMs, delivery, stages };
    };

    const rows = [await rounds(engine)];
    if (OTHER_SESSIONS > 0) {
      let talking = true;
      const others = await Promise.all(
        Array.from({ length: OTHER_SESSIONS }, () =>
          visage.sessions.create({ avatar_id: AVATAR, mode: 'video', ...voice }),
        ),
      );
      const talkers = others.map(async (o) => {
        while (talking) {
          await visage.sessions.speak(o.session_id, OTHER_SENTENCE);
          await sleep(2_500 + Math.random() * 1_000);
        }
      });
      try {
        rows.push(await rounds(`${engine}, +${OTHER_SESSIONS} speaking`));
      } finally {
        talking = false;
        await Promise.all(talkers);
        for (const o of others) await visage.sessions.delete(o.session_id);
      }
    }
    await plain.leave();
    await client.leave();
    await visage.sessions.delete(s.session_id);
    return rows;
  } finally {
    await node.quit();
  }
}

const rows: Row[] = await measure('espeak', null, {});
for (const [engine, fake, env] of [
  [
    'cartesia',
    new CartesiaFake(),
    (u: string, k: string) => ({ CARTESIA_API_KEY: k, CARTESIA_BASE_URL: u }),
  ],
  [
    'elevenlabs',
    new ElevenLabsFake(),
    (u: string, k: string) => ({ ELEVENLABS_API_KEY: k, ELEVENLABS_BASE_URL: u }),
  ],
] as const) {
  const url = await fake.listen();
  // The fake's audio is synthesized before measuring, so it answers in exactly its delay.
  await fakeSpeech(SENTENCE, 24_000);
  fake.behaviour.firstChunkDelayMs = PROVIDER_FIRST_CHUNK_MS;
  fake.behaviour.chunkIntervalMs = 100; // real time, as a provider streams
  try {
    rows.push(...(await measure(engine, fake, env(url, fake.apiKey))));
  } finally {
    await fake.close();
  }
}

const fmt = (xs: number[]) =>
  `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;
/** What Visage itself adds: each round's figure less the provider's delay and LiveKit's own
 * delivery in the same round. */
const ownShare = (r: Row) => r.speakToAudio.map((x, i) => x - r.providerDelayMs - r.delivery[i]!);
console.log('\nspeak -> first audible audio at a WebRTC subscriber, per TTS engine');
console.table(
  Object.fromEntries(
    rows.map((r) => [
      r.label,
      {
        'speak -> first audible audio': fmt(r.speakToAudio),
        'provider first chunk': r.providerDelayMs ? `${r.providerDelayMs} ms (fake)` : '-',
        'Visage overhead (minus provider)': r.providerDelayMs
          ? fmt(r.speakToAudio.map((x) => x - r.providerDelayMs))
          : fmt(r.speakToAudio),
        'LiveKit alone (no Visage)': fmt(r.delivery),
        "Visage's own (minus provider and LiveKit)": fmt(ownShare(r)),
      },
    ]),
  ),
);
console.log(
  "LiveKit alone: in each round, a plain participant in the same room says the same speech the way the avatar does (48 kHz, the same AudioSource queue, 100 ms frames); its first frame handed over -> audible is what any LiveKit publisher pays. Visage's own: each round's figure less the provider's delay and that round's LiveKit alone. '+N speaking': the same rounds while N other sessions on the node each speak a short sentence every 2.5 to 3.5 s, as on a node that serves others (the paths a speak takes have run lately).",
);
console.log(
  `speak -> first audible audio, where the time goes (ms, median / p95; the fakes' own first chunk takes ${PROVIDER_FIRST_CHUNK_MS} ms)`,
);
console.table(
  Object.fromEntries(
    STAGES.map((stage) => [
      stage,
      Object.fromEntries(
        rows.map((r) => {
          const { median, p95 } = summary(r.stages[stage]);
          return [r.label, `${median.toFixed(1)} / ${p95.toFixed(1)}`];
        }),
      ),
    ]),
  ),
);
await recordFigures(
  'tts',
  Object.fromEntries(
    rows.map((r) => [
      r.label,
      {
        speakToAudioMs: summary(r.speakToAudio),
        providerFirstChunkMs: r.providerDelayMs,
        overheadMs: summary(r.speakToAudio.map((x) => x - r.providerDelayMs)),
        liveKitDeliveryMs: summary(r.delivery),
        visageOwnMs: summary(ownShare(r)),
        stagesMs: Object.fromEntries(STAGES.map((stage) => [stage, summary(r.stages[stage])])),
      },
    ]),
  ),
);
await stopEspeakThread();
await dispose();
process.exit(0);
