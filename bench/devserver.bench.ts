// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Embedded LiveKit-compatible server: its CPU per forwarded stream, the join time (connect()
 * to the first subscribed video frame) for 1, 4 and 16 subscribers, and how soon a publisher that
 * joins a room is seen by a subscriber already there (an avatar joining a call), in one run.
 *
 * One rtc-node publisher sends the test harness's moving-bar video (320x240 VP8, 25 fps) and a
 * sine (Opus); N rtc-node subscribers join at once. The server runs in its own process
 * (bench/support/devserverProcess.ts) so only its CPU time is counted. Run through
 * `npm run bench` (inside the benchmark network namespace); about a minute.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fork, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import {
  dispose,
  Room,
  RoomEvent,
  TrackKind,
  VideoStream,
  type RemoteTrack,
} from '@livekit/rtc-node';
import { publishMovingBar, publishSine, token } from '../test/devserver/publishers.js';
import { QUICK, recordFigures } from './support/figures.js';

const address = process.env.VISAGE_TEST_ADDRESS;
if (!address) {
  console.error('devserver bench: needs the network namespace (run `npm run bench` as root)');
  process.exit(1);
}
const SUBSCRIBER_COUNTS = QUICK ? [0, 1, 16] : [0, 1, 4, 16];
const SETTLE_MS = QUICK ? 1_000 : 2_000;
const MEASURE_MS = QUICK ? 3_000 : 8_000;
const JOIN_TIMEOUT_MS = 30_000;
// Bound the whole run: a stuck client must not hang `npm run bench`.
setTimeout(() => {
  console.error('devserver bench: took longer than 3 minutes; giving up');
  process.exit(1);
}, 180_000).unref();

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
};

// ---- the server process -------------------------------------------------------------------

interface ServerMessage {
  type: string;
  url?: string;
  cpuMs?: number;
  at?: number;
}

const SERVER_SCRIPT = fileURLToPath(new URL('./support/devserverProcess.ts', import.meta.url));
const serverProcess: ChildProcess = fork(SERVER_SCRIPT, [address], {
  // BENCH_PROFILE=DIR writes a CPU profile of the dev server there (chrome://inspect format).
  execArgv: [
    '--import',
    'tsx',
    ...(process.env.BENCH_PROFILE
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
      : []),
  ],
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const nextMessage = (type: string) =>
  new Promise<ServerMessage>((resolve, reject) => {
    const onMessage = (message: ServerMessage) => {
      if (message.type !== type) return;
      serverProcess.off('message', onMessage);
      serverProcess.off('exit', onExit);
      resolve(message);
    };
    const onExit = (code: number | null) => reject(new Error(`server exited (${code})`));
    serverProcess.on('message', onMessage);
    serverProcess.once('exit', onExit);
  });
const serverCpu = async () => {
  const reply = nextMessage('cpu');
  serverProcess.send({ type: 'cpu' });
  const { cpuMs, at } = await reply;
  return { cpuMs: cpuMs!, at: at! };
};
const serverUrl = (await nextMessage('ready')).url!;
/** Server and client (this process, rtc-node's native threads included) CPU time, ms. */
const cpuNow = async () => {
  const { cpuMs, at } = await serverCpu();
  const client = process.cpuUsage();
  return { serverMs: cpuMs, clientMs: (client.user + client.system) / 1000, at };
};

// ---- clients ------------------------------------------------------------------------------

interface Subscriber {
  client: Room;
  /** connect() to the first decoded video frame. */
  joinMs: number;
  /** connect() resolved: signalling joined and the peer connection up. */
  connectedMs: number;
  /** The video track was subscribed (its first packets arrived). */
  subscribedMs: number;
  /** Video frames received so far (counted only when asked to keep watching). */
  frames: () => number;
  stop: () => Promise<void>;
}

/**
 * Joins and resolves once the first video frame is decoded, with the ms from connect() to it.
 * With `watch`, it keeps counting frames (proof that forwarding goes on while CPU is measured);
 * otherwise it stops reading, as the clients share the machine with the server.
 */
async function joinSubscriber(room: string, identity: string, watch: boolean) {
  const client = new Room();
  const started = performance.now();
  let frames = 0;
  let reader: ReadableStreamDefaultReader<unknown> | undefined;
  let subscribedMs = NaN;
  const firstFrame = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${identity}: no video`)), JOIN_TIMEOUT_MS);
    client.on(RoomEvent.TrackSubscribed, (track: RemoteTrack) => {
      if (track.kind !== TrackKind.KIND_VIDEO) return;
      subscribedMs = performance.now() - started;
      const videoReader = new VideoStream(track).getReader();
      reader = videoReader;
      void videoReader.read().then(async () => {
        clearTimeout(timer);
        resolve(performance.now() - started);
        if (!watch) return void videoReader.cancel();
        for (;;) {
          const { done } = await videoReader.read();
          if (done) return;
          frames++;
        }
      }, reject);
    });
  });
  await client.connect(serverUrl, await token(room, identity), {
    autoSubscribe: true,
    dynacast: false,
  });
  const connectedMs = performance.now() - started;
  const joinMs = await firstFrame;
  return {
    client,
    joinMs,
    connectedMs,
    subscribedMs,
    frames: () => frames,
    stop: async () => {
      await reader?.cancel().catch(() => undefined);
      await client.disconnect();
    },
  } satisfies Subscriber;
}

interface PublisherJoin {
  /** The late publisher's connect() resolved. */
  connectedMs: number;
  /** Both its publishTrack() calls resolved. */
  publishedMs: number;
  /** The first frame of its video decoded at the subscriber that was waiting. */
  frameMs: number;
}

/**
 * A subscriber waits in a room; a publisher joins and publishes video and audio at once, as an
 * avatar does. Times from the publisher's connect(): the publisher's DTLS handshake is in it,
 * which the subscriber joins above are not (there the server offers and the SDK answers).
 */
async function publisherJoin(round: number): Promise<PublisherJoin> {
  const room = `bench-publish-${round}`;
  const watcher = new Room();
  const firstFrame = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('no video from the publisher')),
      JOIN_TIMEOUT_MS,
    );
    watcher.on(RoomEvent.TrackSubscribed, (track: RemoteTrack) => {
      if (track.kind !== TrackKind.KIND_VIDEO) return;
      const reader = new VideoStream(track).getReader();
      void reader.read().then(() => {
        clearTimeout(timer);
        resolve(performance.now());
        void reader.cancel();
      }, reject);
    });
  });
  await watcher.connect(serverUrl, await token(room, 'watcher'), {
    autoSubscribe: true,
    dynacast: false,
  });
  const late = new Room();
  const started = performance.now();
  await late.connect(serverUrl, await token(room, 'publisher'), {
    autoSubscribe: false,
    dynacast: false,
  });
  const connectedMs = performance.now() - started;
  const [lateVideo, lateAudio] = await Promise.all([publishMovingBar(late), publishSine(late)]);
  const publishedMs = performance.now() - started;
  const frameMs = (await firstFrame) - started;
  await Promise.all([lateVideo.stop(), lateAudio.stop()]);
  await late.disconnect();
  await watcher.disconnect();
  return { connectedMs, publishedMs, frameMs };
}

interface Row {
  subscribers: number;
  streams: number;
  cpuPercent: number;
  /** The bench process's CPU (publisher and subscribers, rtc-node's threads included). */
  clientCpuPercent: number;
  /** CPU of one join, server and clients together, less the background. */
  joinCpuMs?: number;
  /** What that CPU allows the join p50 to be at best on this machine's cores. */
  joinFloorP50?: number;
  joinP50?: number;
  joinMax?: number;
  connectedP50?: number;
  subscribedP50?: number;
  /** Video frame rate one subscriber received while CPU was measured (the source sends 25). */
  fps?: number;
}

const ROOM = 'bench-room';
const publisher = new Room();
await publisher.connect(serverUrl, await token(ROOM, 'publisher'), {
  autoSubscribe: false,
  dynacast: false,
});
const video = await publishMovingBar(publisher);
const audio = await publishSine(publisher);
const rows: Row[] = [];
const publisherJoins: PublisherJoin[] = [];
try {
  for (const count of SUBSCRIBER_COUNTS) {
    const joinStart = await cpuNow();
    const joined = await Promise.all(
      Array.from({ length: count }, (_, i) => joinSubscriber(ROOM, `sub-${count}-${i}`, i === 0)),
    );
    const joinEnd = await cpuNow();
    await sleep(SETTLE_MS);
    const before = await cpuNow();
    const framesBefore = joined[0]?.frames() ?? 0;
    await sleep(MEASURE_MS);
    const after = await cpuNow();
    const framesAfter = joined[0]?.frames() ?? 0;
    // What the joins cost both sides, less what the same time costs with nobody joining (the
    // publisher encoding, the server's ingest: the ingest-only row).
    const background = rows[0] ? (rows[0].cpuPercent + rows[0].clientCpuPercent) / 100 : 0;
    const joinCpu = joinEnd.serverMs - joinStart.serverMs + joinEnd.clientMs - joinStart.clientMs;
    const cpuPerJoin = count ? (joinCpu - background * (joinEnd.at - joinStart.at)) / count : 0;
    const joinTimes = joined.map((j) => j.joinMs);
    rows.push({
      subscribers: count,
      // Each subscriber receives the video and the audio track.
      streams: count * 2,
      cpuPercent: ((after.serverMs - before.serverMs) / (after.at - before.at)) * 100,
      clientCpuPercent: ((after.clientMs - before.clientMs) / (after.at - before.at)) * 100,
      joinCpuMs: count ? cpuPerJoin : undefined,
      // The soonest the median join could end if every core did nothing but joins, one after
      // another in arrival order: half of them, their CPU spread over the cores left over.
      joinFloorP50: count
        ? (Math.ceil(count / 2) * cpuPerJoin) / (cpus().length - background)
        : undefined,
      joinP50: count ? percentile(joinTimes, 0.5) : undefined,
      joinMax: count ? Math.max(...joinTimes) : undefined,
      connectedP50: count
        ? percentile(
            joined.map((j) => j.connectedMs),
            0.5,
          )
        : undefined,
      subscribedP50: count
        ? percentile(
            joined.map((j) => j.subscribedMs),
            0.5,
          )
        : undefined,
      fps: count ? ((framesAfter - framesBefore) * 1000) / (after.at - before.at) : undefined,
    });
    await Promise.all(joined.map((j) => j.stop()));
    await sleep(1_000);
  }
  for (let round = 0; round < (QUICK ? 3 : 5); round++) {
    publisherJoins.push(await publisherJoin(round));
  }
} finally {
  await Promise.all([video.stop(), audio.stop()]);
  await publisher.disconnect();
  serverProcess.send({ type: 'close' });
  await new Promise((resolve) => serverProcess.once('exit', resolve));
  await dispose();
}

// ---- report -------------------------------------------------------------------------------

const idle = rows[0]!.cpuPercent;
const format = (value: number | undefined, digits = 1) =>
  value === undefined || Number.isNaN(value) ? '-' : value.toFixed(digits);
const table = [
  [
    'subscribers',
    'forwarded streams',
    'server CPU (% of a core)',
    'CPU per forwarded stream (%)',
    'join p50 (ms)',
    'join max (ms)',
    'of which: connected p50',
    'track subscribed p50',
    'video fps at a subscriber',
    'CPU per join, server + clients (ms)',
    'CPU floor for join p50 (ms)',
  ],
  ...rows.map((row) => [
    String(row.subscribers),
    String(row.streams),
    format(row.cpuPercent),
    row.streams ? format((row.cpuPercent - idle) / row.streams, 2) : '(ingest only)',
    format(row.joinP50, 0),
    format(row.joinMax, 0),
    format(row.connectedP50, 0),
    format(row.subscribedP50, 0),
    format(row.fps),
    format(row.joinCpuMs, 0),
    format(row.joinFloorP50, 0),
  ]),
];
const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => line[column]!.length)));
console.log(
  `\nDev server: one publisher (320x240 VP8 25 fps + Opus) forwarded to N subscribers; ` +
    `${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}`,
);
console.log(
  'CPU per forwarded stream = (server CPU - ingest-only CPU) / streams; join = connect() to ' +
    'first decoded video frame, all N joining at once. CPU per join = (server + this ' +
    "process's CPU while they join - the ingest-only row's rate) / N; the clients share the " +
    'machine. CPU floor for join p50 = the first half of the joins, one after another, on ' +
    'the cores the background leaves.\n',
);
for (const [i, line] of table.entries()) {
  console.log(`| ${line.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ')} |`);
  if (i === 0) console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
}
const median = (pick: (j: PublisherJoin) => number) =>
  percentile(publisherJoins.map(pick), 0.5).toFixed(0);
console.log(
  `\nA publisher joins a room a subscriber is in (video + audio at once, as an avatar), from its ` +
    `connect(), median of ${publisherJoins.length}: connected ${median((j) => j.connectedMs)} ms, ` +
    `both tracks published ${median((j) => j.publishedMs)} ms, first frame at the subscriber ` +
    `${median((j) => j.frameMs)} ms (${publisherJoins.map((j) => j.frameMs.toFixed(0)).join(', ')}).`,
);
await recordFigures('devserver', {
  publisherJoinMs: publisherJoins,
  rows: rows.map((row) => ({
    subscribers: row.subscribers,
    cpuPercent: row.cpuPercent,
    joinP50Ms: row.joinP50 ?? null,
    joinMaxMs: row.joinMax ?? null,
    connectedP50Ms: row.connectedP50 ?? null,
    subscribedP50Ms: row.subscribedP50 ?? null,
    fps: row.fps ?? null,
    clientCpuPercent: row.clientCpuPercent,
    joinCpuMs: row.joinCpuMs ?? null,
    joinFloorP50Ms: row.joinFloorP50 ?? null,
  })),
});
