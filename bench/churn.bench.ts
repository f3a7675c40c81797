// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Churn soak: sessions created, joined by a viewer, made to speak and deleted, one after another
 * (a few at a time), while the resident memory of the Visage process, of its media processes and
 * of the LiveKit server process is sampled every 100 sessions. Memory must come back: the run
 * passes when the last sample is within 10 % of the first one taken after warm-up.
 *
 *   BENCH_CHURN_SESSIONS  sessions in all (default 1000)
 *   BENCH_CHURN_WARMUP    sessions before the reference sample (default 100)
 *   BENCH_CHURN_PARALLEL  sessions alive at once (default 4)
 *   BENCH_CHURN_MEDIA_PROCESSES   media processes (default 1; 0 runs the media in the API process)
 *
 * Run through `npm run bench -- churn` (inside the benchmark network namespace).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { dispose } from '@livekit/rtc-node';
import { VisageClient } from '@visage-avatar/client';
import { AVATAR_CATALOGUE } from '../src/media/avatarCatalogue.js';
import { AvatarClient } from '../test/media/room/avatarClient.js';
import { QUICK, recordFigures } from './support/figures.js';

if (QUICK) {
  console.log('--quick: the memory soak skipped (latency figures only)');
  process.exit(0);
}

const address = process.env.VISAGE_TEST_ADDRESS;
if (!address) throw new Error('run through `npm run bench` (needs the namespace address)');
const count = (name: string, fallback: number) => {
  const n = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
};
const TOTAL = count('BENCH_CHURN_SESSIONS', 1000);
const WARMUP = Math.min(count('BENCH_CHURN_WARMUP', 100), TOTAL);
const PARALLEL = count('BENCH_CHURN_PARALLEL', 4);
/** Media processes (0: the media in the API process, as the previous figures were taken). */
const MEDIA_PROCESSES = Number(process.env.BENCH_CHURN_MEDIA_PROCESSES ?? 1);
const SAMPLE_EVERY = Math.min(100, WARMUP);
const TOLERANCE = 0.1;

const node = spawn(
  process.execPath,
  [
    '--expose-gc',
    '--import',
    'tsx',
    'bench/support/visageNode.ts',
    address,
    String(MEDIA_PROCESSES),
  ],
  {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: {
      ...process.env,
      NODE_ENV: 'production',
      // The media processes too collect their garbage before each sample (see MediaProcessMemory).
      NODE_OPTIONS: [process.env.NODE_OPTIONS, '--expose-gc'].filter(Boolean).join(' '),
    },
  },
);
const lines = createInterface({ input: node.stdout! })[Symbol.asyncIterator]();
const nextLine = async () =>
  JSON.parse((await lines.next()).value as string) as Record<string, unknown>;
const { apiUrl, secret } = (await nextLine()) as { apiUrl: string; secret: string };
const visage = new VisageClient({ apiKey: secret, baseUrl: apiUrl, maxRetries: 0 });
const memory = async () => {
  node.stdin!.write('mem\n');
  return (await nextLine()) as {
    rss: number;
    heapUsed: number;
    processesRss: number;
    processesHeap: number;
    livekitRss: number;
    livekitHeap: number;
    livekitHeapTotal: number;
  };
};
const avatars = AVATAR_CATALOGUE.map((a) => a.avatarId);

/** One session's life: create, a viewer joins and sees video, one sentence heard, delete. */
async function oneSession(i: number): Promise<void> {
  const s = await visage.sessions.create({
    avatar_id: avatars[i % avatars.length]!,
    mode: 'video',
  });
  const client = new AvatarClient();
  try {
    await client.join(s.livekit_url, s.participant_token!);
    await client.waitFor(() => client.video.length > 0, 20_000, 'first video frame');
    const { utterance_id } = await visage.sessions.speak(s.session_id, `Session ${i} says hello.`);
    await client.waitFor(
      () => client.finals().some((m) => m.utterance_id === utterance_id),
      20_000,
      'the sentence heard',
    );
  } finally {
    await client.leave().catch(() => undefined);
    await visage.sessions.delete(s.session_id);
  }
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
console.log(
  `churn: ${TOTAL} sessions, ${PARALLEL} at a time, ${MEDIA_PROCESSES} media processes, reference after ${WARMUP} ` +
    `(MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX ?? 'unset'})`,
);
console.log(
  'sessions | Visage RSS MB | heap MB | media processes RSS MB | media processes heap MB | LiveKit RSS MB | LiveKit heap MB (of) | s/100',
);
let done = 0;
let failed = 0;
let next = 0;
let reference: { rss: number; processesRss: number; livekitRss: number } | undefined;
let last = await memory();
let lapStart = performance.now();
const sample = async () => {
  last = await memory();
  const per100 = ((performance.now() - lapStart) / 1000 / SAMPLE_EVERY) * 100;
  lapStart = performance.now();
  console.log(
    `${String(done).padStart(8)} | ${mb(last.rss).padStart(13)} | ${mb(last.heapUsed).padStart(7)} | ${mb(last.processesRss).padStart(14)} | ${mb(last.processesHeap).padStart(15)} | ${mb(last.livekitRss).padStart(14)} | ${`${mb(last.livekitHeap)} (${mb(last.livekitHeapTotal)})`.padStart(20)} | ${per100.toFixed(0)}`,
  );
  if (done === WARMUP) reference = last;
};
let sampling = Promise.resolve();
await Promise.all(
  Array.from({ length: PARALLEL }, async () => {
    while (next < TOTAL) {
      const i = next++;
      try {
        await oneSession(i);
      } catch (err) {
        failed++;
        console.error(`session ${i}: ${(err as Error).message}`);
      }
      done++;
      if (done % SAMPLE_EVERY === 0 || done === TOTAL) {
        sampling = sampling.then(sample);
        await sampling;
      }
    }
  }),
);
node.stdin!.write('quit\n');
await new Promise((r) => node.once('exit', r));
await dispose();

const ref = reference ?? last;
const growth = (now: number, then: number) => (now - then) / then;
const visageGrowth = growth(last.rss, ref.rss);
const livekitGrowth = growth(last.livekitRss, ref.livekitRss);
const processesGrowth = MEDIA_PROCESSES > 0 ? growth(last.processesRss, ref.processesRss) : 0;
console.log(
  `after ${done} sessions (${failed} failed): Visage RSS ${(visageGrowth * 100).toFixed(1)} %, ` +
    `media processes RSS ${(processesGrowth * 100).toFixed(1)} %, ` +
    `LiveKit RSS ${(livekitGrowth * 100).toFixed(1)} % against the sample after warm-up ` +
    `(limit ${TOLERANCE * 100} %)`,
);
await recordFigures('churn', {
  sessions: done,
  failed,
  processes: MEDIA_PROCESSES,
  rssGrowth: { visage: visageGrowth, mediaProcesses: processesGrowth, livekit: livekitGrowth },
  afterWarmup: ref,
  atEnd: last,
});
if (failed > 0) process.exit(1);
const grew = visageGrowth > TOLERANCE || processesGrowth > TOLERANCE || livekitGrowth > TOLERANCE;
if (grew) process.exit(1);
