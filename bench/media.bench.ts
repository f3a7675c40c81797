// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Media core figures, side by side in one run:
 *   create -> avatar video subscribed, speak -> first audible audio, interrupt -> silence,
 *   audio/video lip-sync offset (mouth opening against the audio envelope, at the subscriber),
 *   server CPU per session, and how many concurrent speaking sessions keep full frame rate and
 *   unbroken audio on this machine, per media process count and video codec.
 * Run through `npm run bench` (inside the benchmark network namespace).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { availableParallelism } from 'node:os';
import { dispose } from '@livekit/rtc-node';
import { AccessToken } from 'livekit-server-sdk';
import { VisageClient } from '@visage-avatar/client';
import { AVATAR_CATALOGUE } from '../src/media/avatarCatalogue.js';
import { AVATAR_VIDEO_CODECS, type AvatarVideoCodec } from '../src/media/room/index.js';
import { AvatarClient, meanJitterBufferMs } from '../test/media/room/avatarClient.js';
import { QUICK, median, recordFigures, rounds, summary } from './support/figures.js';
import { startBenchNode, type BenchNode } from './support/benchNode.js';
import { clientCapacity } from './support/clientDensity.js';
import {
  frameCostTable,
  measureFrameCost,
  measurePublishedCost,
  VARIANTS,
} from './support/frameCost.js';

const address = process.env.VISAGE_TEST_ADDRESS;
if (!address) throw new Error('run through `npm run bench` (needs the namespace address)');
const AVATAR = AVATAR_CATALOGUE[0]!.avatarId;
const SENTENCE =
  'The avatar speaks this sentence so that we can measure how quickly its voice arrives.';
const LONG =
  'Here is a longer passage of speech that keeps the avatar talking for a good while, sentence after sentence, so that the benchmark can watch the frame rate and the audio of many sessions at once while every one of them is busy speaking.';

// BENCH_PROFILE=DIR writes a CPU profile of the Visage process there (chrome://inspect format).
const profile = process.env.BENCH_PROFILE
  ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
  : [];
/** Media processes per configuration measured (BENCH_MEDIA_PROCESSES, e.g. `0,1,2`). */
const PROCESS_CONFIGS = (
  process.env.BENCH_MEDIA_PROCESSES ??
  (QUICK ? `${availableParallelism()}` : `1,${availableParallelism()}`)
)
  .split(',')
  .map(Number);
/**
 * The avatars' video codecs measured for density (BENCH_CODECS, e.g. `h264,vp8`): the default
 * (H.264) with every media process configuration, then each other codec with the last one.
 */
const CODECS = (process.env.BENCH_CODECS ?? (QUICK ? 'h264' : 'h264,vp8'))
  .split(',')
  .map((name) => {
    const codec = AVATAR_VIDEO_CODECS.find((c) => c === name.trim().toLowerCase());
    if (!codec)
      throw new Error(
        `BENCH_CODECS: ${JSON.stringify(name)} is not one of ${AVATAR_VIDEO_CODECS.join(', ')}`,
      );
    return codec;
  });
const DENSITY_CONFIGS = CODECS.flatMap((codec, i) =>
  (i === 0 ? PROCESS_CONFIGS : PROCESS_CONFIGS.slice(-1)).map((processes) => ({
    processes,
    codec,
  })),
);

/** A Visage node (API, embedded LiveKit child, `processes` media processes) in its own process. */
const startNode = (processes: number, codec: AvatarVideoCodec = CODECS[0]!) =>
  startBenchNode({
    address: address!,
    processes,
    nodeFlags: profile,
    env: { VISAGE_VIDEO_CODEC: codec },
  });

/** 10 ms audio frames that must stay quiet to count as silence. */
const QUIET_FRAMES = 25;

async function openSession(visage: VisageClient) {
  const t0 = performance.now();
  const s = await visage.sessions.create({ avatar_id: AVATAR, mode: 'video' });
  const created = performance.now();
  const client = new AvatarClient();
  await client.join(s.livekit_url, s.participant_token!);
  const joined = performance.now();
  await client.waitFor(() => client.video.length > 0, 15_000, 'first video frame');
  const videoAt = client.video[0]!.atMs + client.t0;
  /** Epoch ms of a performance.now() reading, comparable with the node's marks. */
  const epoch = (at: number) => performance.timeOrigin + at;
  return {
    s,
    client,
    videoMs: videoAt - t0,
    times: {
      startedAt: epoch(t0),
      createdAt: epoch(created),
      joinedAt: epoch(joined),
      videoAt: epoch(videoAt),
    },
  };
}

/**
 * create -> first avatar frame at a viewer that was in the room before the create, as the user
 * talking to an agent is when the agent starts its avatar: the avatar's join and first key frame,
 * without a viewer's join after the answer.
 */
async function createToVideoWithViewer(node: BenchNode, room: string): Promise<number> {
  const grant = new AccessToken(node.livekit.apiKey, node.livekit.apiSecret, {
    identity: `viewer-${room}`,
  });
  grant.addGrant({ roomJoin: true, room, canSubscribe: true, canPublish: false });
  const client = new AvatarClient();
  await client.join(node.livekit.url, await grant.toJwt());
  let sessionId: string | undefined;
  try {
    const t0 = client.now();
    const s = await node.visage.sessions.create({
      avatar_id: AVATAR,
      mode: 'video',
      room_name: room,
    });
    sessionId = s.session_id;
    await client.waitFor(() => client.video.length > 0, 15_000, 'first video frame');
    return client.video[0]!.atMs - t0;
  } finally {
    await client.leave();
    if (sessionId) await node.visage.sessions.delete(sessionId);
  }
}

/** The lag (ms) that best aligns mouth opening with the audio envelope; > 0: video late. */
function lipSyncOffset(client: AvatarClient, fromMs: number, toMs: number): number {
  const step = 10;
  const n = Math.floor((toMs - fromMs) / step);
  const audio = new Float64Array(n);
  const mouth = new Float64Array(n);
  for (const a of client.audioBetween(fromMs, toMs)) {
    const i = Math.floor((a.atMs - fromMs) / step);
    if (i >= 0 && i < n) audio[i] = Math.max(audio[i]!, a.rms);
  }
  // Hold each video sample until the next one (frames arrive every 40 ms).
  const frames = client.framesBetween(fromMs, toMs);
  for (let f = 0; f < frames.length; f++) {
    const start = Math.floor((frames[f]!.atMs - fromMs) / step);
    const end = f + 1 < frames.length ? Math.floor((frames[f + 1]!.atMs - fromMs) / step) : n;
    for (let i = Math.max(0, start); i < Math.min(n, end); i++) mouth[i] = frames[f]!.mouth;
  }
  const norm = (x: Float64Array) => {
    const m = x.reduce((s, v) => s + v, 0) / x.length;
    const sd = Math.sqrt(x.reduce((s, v) => s + (v - m) ** 2, 0) / x.length) || 1;
    return x.map((v) => (v - m) / sd);
  };
  const a = norm(audio);
  const v = norm(mouth);
  let best = 0;
  let bestCorr = -Infinity;
  for (let lag = -30; lag <= 30; lag++) {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const j = i + lag;
      if (j >= 0 && j < n) sum += a[i]! * v[j]!;
    }
    if (sum > bestCorr) {
      bestCorr = sum;
      best = lag;
    }
  }
  return best * step;
}

// ---- where a speaking frame's CPU goes, per piece and per thread (issue 47) ----------------
// First, on a machine not yet busy with the rest: each piece of Visage's own per-frame work in
// this process, then one speaking avatar's media alone in a process, before issue 47's change
// and now, alternately (CPU time, not wall time: the machine may be loaded).
const frameCost = await measureFrameCost(AVATAR);
console.log("\nA speaking frame's pieces, each alone in this process (CPU time)");
console.table(frameCostTable(frameCost));
const published = await measurePublishedCost(address, AVATAR, QUICK ? 1 : 3);
console.log(
  "One speaking avatar's media alone in a process, no TTS (the embedded LiveKit and a decoding viewer in others): before issue 47's change (rtc-node's native logs forwarded to JavaScript), now, in client mode (no video; the face stream), and the audio alone (the floor under both), in turn",
);
console.table(
  published.map((p) => ({
    variant: p.variant,
    'process (cores)': p.processCores.toFixed(3),
    'JavaScript thread': p.mainThreadCores.toFixed(3),
    'H.264 encoder (EncoderQueue)': (p.threads.EncoderQueue ?? 0).toFixed(3),
    'Opus (AudioEncoder)': (p.threads.AudioEncoder ?? 0).toFixed(3),
    'log records/s to JS': p.logRecordsPerS.toFixed(0),
    'video kbps': p.kbps.toFixed(0),
    'encode ms/frame': p.encodeMsPerFrame.toFixed(2),
    'mean QP': p.meanQp.toFixed(1),
    'viewer fps': p.viewerFps.toFixed(1),
    freezes: p.viewerFreezes,
    'embedded LiveKit (cores)': p.livekitCores.toFixed(3),
  })),
);
const threadNames = [...new Set(published.flatMap((p) => Object.keys(p.threads)))];
console.log('The same, per thread (cores, median of each variant)');
console.table(
  Object.fromEntries(
    threadNames.map((name) => [
      name,
      Object.fromEntries(
        VARIANTS.map((v) => [
          v,
          median(published.filter((p) => p.variant === v).map((p) => p.threads[name] ?? 0)).toFixed(
            3,
          ),
        ]),
      ),
    ]),
  ),
);

// ---- latencies, five rounds (with the default: a media process per core) -------------------
const latencyNode = await startNode(PROCESS_CONFIGS.at(-1)!);
const visage = latencyNode.visage;
const createToVideo: number[] = [];
const createToVideoViewerIn: number[] = [];
const speakToAudio: number[] = [];
const interruptToSilence: number[] = [];
const lipSync: number[] = [];
/** speak -> first audible audio, stage by stage (ms), from the media's marks and the client. */
const speakStages: Record<string, number[]> = {
  'HTTP + session manager + IPC to the media process': [],
  'waiting behind other utterances': [],
  'TTS first chunk': [],
  'resample + handed to the AudioSource': [],
  'AudioSource queue, Opus, network, jitter buffer (to audible)': [],
  "  of which: the subscriber's audio jitter buffer (libwebrtc's mean delay)": [],
};
/** create -> avatar video at a subscriber, step by step (ms), from the avatar's join line. */
const createStages: Record<string, number[]> = {
  'HTTP + store + hand-over to the media (to the join)': [],
  'room set-up (RoomService CreateRoom) + avatar token': [],
  "avatar's connect()": [],
  'publish audio + video (one offer)': [],
  'the server lists both tracks (RoomService poll)': [],
  'first frame rendered': [],
  'answer back to the caller': [],
  "subscriber's connect()": [],
  'connect() -> first video frame at the subscriber': [],
};
/** Epoch ms of a client time (performance.now() based), comparable with the node's marks. */
const epochOf = (client: AvatarClient, atMs: number) => performance.timeOrigin + client.t0 + atMs;
for (let round = 0; round < rounds(); round++) {
  const { s, client, videoMs, times } = await openSession(visage);
  createToVideo.push(videoMs);
  const join = await latencyNode.joinMarks(s.room_name);
  if (join) {
    const steps = [
      join.join_started_at - times.startedAt,
      join.room_ms ?? 0,
      join.connect_ms,
      join.publish_ms,
      join.tracks_received_ms ?? 0,
      join.first_frame_ms,
    ];
    const joinedAt = join.join_started_at + steps.slice(1).reduce((a, b) => a + b, 0);
    steps.push(
      times.createdAt - joinedAt,
      times.joinedAt - times.createdAt,
      times.videoAt - times.joinedAt,
    );
    Object.values(createStages).forEach((xs, i) => xs.push(steps[i]!));
  }
  await sleep(800);
  const bufferBefore = await client.audioJitterBuffer();
  const sentAt = client.now();
  const { utterance_id } = await visage.sessions.speak(s.session_id, SENTENCE);
  await client.waitFor(
    () => client.audio.some((a) => a.atMs > sentAt && a.rms > 300),
    10_000,
    'audio',
  );
  const audibleAt = client.audio.find((a) => a.atMs > sentAt && a.rms > 300)!.atMs;
  speakToAudio.push(audibleAt - sentAt);
  const buffered = meanJitterBufferMs(bufferBefore, await client.audioJitterBuffer());
  const marks = await latencyNode.marks(utterance_id);
  if (marks) {
    const handedAt = marks.queued_at + marks.waited_ms + marks.first_chunk_ms + marks.handed_ms;
    const stages = Object.values(speakStages);
    stages[0]!.push(marks.queued_at - epochOf(client, sentAt));
    stages[1]!.push(marks.waited_ms);
    stages[2]!.push(marks.first_chunk_ms);
    stages[3]!.push(marks.handed_ms);
    stages[4]!.push(epochOf(client, audibleAt) - handedAt);
    if (buffered !== undefined) stages[5]!.push(buffered);
  }
  await client.waitFor(
    () => client.finals().some((m) => m.utterance_id === utterance_id),
    20_000,
    'final',
  );
  lipSync.push(lipSyncOffset(client, sentAt, client.now()));

  await visage.sessions.speak(s.session_id, LONG);
  await client.waitFor(
    () => client.audio.filter((a) => a.atMs > client.now() - 300).some((a) => a.rms > 300),
    10_000,
    'speech',
  );
  await sleep(700);
  const cutAt = client.now();
  await visage.sessions.interrupt(s.session_id);
  // Silence: the start of 250 ms of quiet after the call (a pause between words is shorter).
  await client.waitFor(
    () => {
      const after = client.audio.filter((a) => a.atMs > cutAt);
      return after.some(
        (_, i) =>
          i + QUIET_FRAMES <= after.length &&
          after.slice(i, i + QUIET_FRAMES).every((x) => x.rms < 60),
      );
    },
    5_000,
    'silence',
  );
  const after = client.audio.filter((a) => a.atMs > cutAt);
  const i = after.findIndex(
    (_, k) =>
      after.slice(k, k + QUIET_FRAMES).length === QUIET_FRAMES &&
      after.slice(k, k + QUIET_FRAMES).every((x) => x.rms < 60),
  );
  interruptToSilence.push(after[i]!.atMs - cutAt);
  await client.leave();
  await visage.sessions.delete(s.session_id);
  createToVideoViewerIn.push(
    await createToVideoWithViewer(latencyNode, `bench-viewer-in-${round}`),
  );
}

await latencyNode.quit();

// ---- capacity: concurrent speaking sessions, per media process configuration ---------------
// One viewer per session, on this machine too: it receives and decodes the avatar's video and
// plays out its audio, as a browser would, and what it got is read from its receiver's
// statistics. (The latency rounds above read every frame into JavaScript to measure the mouth;
// doing that here would spend a viewer's share of the machine on measuring.)
interface Step {
  sessions: number;
  minFps: number;
  /** Most video freezes (libwebrtc's count) at one viewer in the window. */
  maxFreezes: number;
  minAudioPacketsPerS: number;
  /** Largest share of the played-out audio that a viewer's jitter buffer had to make up. */
  maxConcealed: number;
  cpuPerSession: number;
  livekitCpuPerSession: number;
  eventLoop: number;
  apiEventLoop: number;
  ok: boolean;
}

/** Full rate: 25 fps (24 allows for the window's edges), 50 Opus packets a second, and less
 * than 1 % of the audio made up by the viewer (a break of 10 ms in every second). */
const FULL_RATE = { fps: 24, audioPacketsPerS: 48, concealed: 0.01 };

async function openViewedSession(visage: VisageClient) {
  const s = await visage.sessions.create({ avatar_id: AVATAR, mode: 'video' });
  const client = new AvatarClient({ streams: false });
  await client.join(s.livekit_url, s.participant_token!);
  const deadline = performance.now() + 15_000;
  while ((await client.receivedStats()).framesDecoded === 0) {
    if (performance.now() > deadline) throw new Error('no video decoded in 15 s');
    await sleep(100);
  }
  return { s, client };
}

async function capacity(node: BenchNode): Promise<Step[]> {
  const { visage } = node;
  const steps: Step[] = [];
  for (const n of (process.env.BENCH_SESSIONS ?? (QUICK ? '1,4' : '1,2,4,6,8,10,12,14,16,18,20'))
    .split(',')
    .map(Number)) {
    const open = [];
    for (let i = 0; i < n; i++) open.push(await openViewedSession(visage));
    // Keep every avatar talking: speak again whenever an utterance ends.
    let keepTalking = true;
    const talkers = open.map(async ({ s, client }) => {
      while (keepTalking) {
        const { utterance_id } = await visage.sessions.speak(s.session_id, LONG);
        await client.waitFor(
          () => !keepTalking || client.finals().some((m) => m.utterance_id === utterance_id),
          60_000,
        );
      }
    });
    await sleep(2_000);
    const windowMs = Number(process.env.BENCH_WINDOW_MS ?? (QUICK ? 3_000 : 6_000));
    const c0 = await node.cpu();
    const r0 = await Promise.all(open.map(({ client }) => client.receivedStats()));
    await sleep(windowMs);
    const r1 = await Promise.all(open.map(({ client }) => client.receivedStats()));
    const c1 = await node.cpu();
    // Rates over each receiver's own interval between its two readings (their timestamps), not
    // the bench's: reading twelve receivers' statistics takes a while on a busy machine.
    const per = open.map((_, i) => {
      const [a, b] = [r0[i]!, r1[i]!];
      const seconds = (b.atUs - a.atUs) / 1e6;
      const samples = b.audioSamples - a.audioSamples;
      return {
        fps: (b.framesDecoded - a.framesDecoded) / seconds,
        freezes: b.freezes - a.freezes,
        audioPacketsPerS: (b.audioPackets - a.audioPackets) / seconds,
        concealed: samples > 0 ? (b.concealedSamples - a.concealedSamples) / samples : 1,
      };
    });
    const cores = (c1.cpuMs - c0.cpuMs) / (c1.at - c0.at);
    const minFps = Math.min(...per.map((p) => p.fps));
    const minAudioPacketsPerS = Math.min(...per.map((p) => p.audioPacketsPerS));
    const maxConcealed = Math.max(...per.map((p) => p.concealed));
    const step: Step = {
      sessions: n,
      minFps,
      maxFreezes: Math.max(...per.map((p) => p.freezes)),
      minAudioPacketsPerS,
      maxConcealed,
      cpuPerSession: cores / n,
      livekitCpuPerSession: (c1.livekitCpuMs - c0.livekitCpuMs) / (c1.at - c0.at) / n,
      eventLoop: c1.eventLoop,
      apiEventLoop: c1.apiEventLoop,
      ok:
        minFps >= FULL_RATE.fps &&
        minAudioPacketsPerS >= FULL_RATE.audioPacketsPerS &&
        maxConcealed < FULL_RATE.concealed,
    };
    steps.push(step);
    keepTalking = false;
    for (const o of open) {
      await visage.sessions.interrupt(o.s.session_id).catch(() => undefined);
      await o.client.leave();
      await visage.sessions.delete(o.s.session_id);
    }
    await Promise.allSettled(talkers);
    if (!step.ok) break;
  }
  return steps;
}

const capacities: { processes: number; codec: AvatarVideoCodec; steps: Step[] }[] = [];
for (const { processes, codec } of DENSITY_CONFIGS) {
  const node = await startNode(processes, codec);
  capacities.push({ processes, codec, steps: await capacity(node) });
  await node.quit();
}

// Client mode (issue 48): the same speaking scenario with no video, the face as a text stream,
// on the last media process configuration.
const clientProcesses = PROCESS_CONFIGS.at(-1)!;
const clientNode = await startNode(clientProcesses);
const clientSteps = await clientCapacity(clientNode, {
  avatarId: AVATAR,
  text: LONG,
  steps: (process.env.BENCH_CLIENT_SESSIONS ?? (QUICK ? '1,4' : '1,4,8,12,16,24,32'))
    .split(',')
    .map(Number),
  windowMs: Number(process.env.BENCH_WINDOW_MS ?? (QUICK ? 3_000 : 6_000)),
});
await clientNode.quit();

const fmt = (xs: number[]) =>
  `${median(xs).toFixed(0)} ms (${xs.map((x) => x.toFixed(0)).join(', ')})`;
console.log(`\nMedia core (median of ${rounds()}, then each round)`);
console.table({
  'create -> avatar video at subscriber': fmt(createToVideo),
  'create -> avatar video at a viewer already in the room': fmt(createToVideoViewerIn),
  'speak -> first audible audio': fmt(speakToAudio),
  'interrupt -> silence': fmt(interruptToSilence),
  'lip-sync offset (video minus audio)': fmt(lipSync),
});
const stageTable = (stages: Record<string, number[]>) =>
  console.table(
    Object.fromEntries(
      Object.entries(stages).map(([stage, xs]) => {
        const { median, p95 } = summary(xs);
        return [stage, { median: median.toFixed(1), p95: p95.toFixed(1) }];
      }),
    ),
  );
console.log('create -> avatar video at subscriber, where the time goes (ms):');
stageTable(createStages);
console.log('speak -> first audible audio, where the time goes (ms):');
stageTable(speakStages);
const configName = (processes: number, codec: AvatarVideoCodec) =>
  `${codec === 'h264' ? 'H.264' : 'VP8'}, ${processes === 0 ? 'media in the API process' : `${processes} media process${processes > 1 ? 's' : ''}`}`;
for (const { processes, codec, steps } of capacities) {
  console.log(
    `Concurrent speaking sessions, ${configName(processes, codec)} (the embedded LiveKit server in its own process, as under \`visage dev\`; a viewer per session in another, decoding)`,
  );
  console.table(
    steps.map((s) => ({
      sessions: s.sessions,
      'min fps': s.minFps.toFixed(1),
      'most freezes': s.maxFreezes,
      'min audio packets/s (50 = all)': s.minAudioPacketsPerS.toFixed(0),
      'most audio made up': `${(s.maxConcealed * 100).toFixed(2)} %`,
      'Visage CPU per session (cores)': s.cpuPerSession.toFixed(3),
      'embedded LiveKit CPU per session': s.livekitCpuPerSession.toFixed(3),
      'busiest media event loop': `${(s.eventLoop * 100).toFixed(0)} %`,
      'API event loop': `${(s.apiEventLoop * 100).toFixed(0)} %`,
      'full rate': s.ok ? 'yes' : 'no',
    })),
  );
}
console.log('Sustained at full frame rate with unbroken audio, side by side:');
console.table(
  capacities.map(({ processes, codec, steps }) => ({
    configuration: configName(processes, codec),
    sessions: steps.filter((s) => s.ok).at(-1)?.sessions ?? 0,
    'tried up to': steps.at(-1)?.sessions,
  })),
);
console.log(
  `Concurrent speaking sessions in client mode, ${clientProcesses} media process${clientProcesses === 1 ? '' : 'es'} (no video; the face as the visage.face text stream; a viewer per session counting its face lines)`,
);
console.table(
  clientSteps.map((s) => ({
    sessions: s.sessions,
    'min face lines/s (25 = all)': s.minFaceRate.toFixed(1),
    'most face writes/s': s.maxWritesPerS.toFixed(1),
    'min audio packets/s (50 = all)': s.minAudioPacketsPerS.toFixed(0),
    'most audio made up': `${(s.maxConcealed * 100).toFixed(2)} %`,
    'Visage CPU per session (cores)': s.cpuPerSession.toFixed(3),
    'embedded LiveKit CPU per session': s.livekitCpuPerSession.toFixed(3),
    'full rate': s.ok ? 'yes' : 'no',
  })),
);
/** Visage's cores per speaking session at the largest step held at full rate. */
const perSession = (steps: { ok: boolean; cpuPerSession: number }[]) =>
  steps.filter((s) => s.ok).at(-1)?.cpuPerSession;
const videoSame = capacities.find((c) => c.processes === clientProcesses && c.codec === CODECS[0]);
const videoCost = videoSame && perSession(videoSame.steps);
const clientCost = perSession(clientSteps);
console.log("Speaking sessions per core on Visage's side, video against client mode (same run):");
console.table({
  video: {
    'cores per session': videoCost?.toFixed(3) ?? '-',
    'sessions per core': videoCost ? (1 / videoCost).toFixed(1) : '-',
  },
  client: {
    'cores per session': clientCost?.toFixed(3) ?? '-',
    'sessions per core': clientCost ? (1 / clientCost).toFixed(1) : '-',
  },
  'client / video': {
    'cores per session': '',
    'sessions per core': videoCost && clientCost ? (videoCost / clientCost).toFixed(1) : '-',
  },
});
await recordFigures('media', {
  clientMode: { processes: clientProcesses, steps: clientSteps },
  frameCost,
  publishedCost: published,
  createToVideoMs: summary(createToVideo),
  createToVideoViewerInMs: summary(createToVideoViewerIn),
  createStagesMs: Object.fromEntries(
    Object.entries(createStages).map(([k, xs]) => [k, summary(xs)]),
  ),
  speakToAudioMs: summary(speakToAudio),
  speakStagesMs: Object.fromEntries(Object.entries(speakStages).map(([k, xs]) => [k, summary(xs)])),
  interruptToSilenceMs: summary(interruptToSilence),
  lipSyncOffsetMs: summary(lipSync),
  sustained: capacities.map(({ processes, codec, steps }) => ({
    processes,
    codec,
    sessions: steps.filter((s) => s.ok).at(-1)?.sessions ?? 0,
    steps,
  })),
});
await dispose();
