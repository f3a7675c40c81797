// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The burst of issue 47 as a user meets it: a fresh `visage dev` started through the CLI (three
 * keys with a cap of 3 made with `visage keys create` before the start), and as soon as it takes
 * sessions (`/readyz` 200), 300 `POST /v1/sessions` at once, each on a new connection as the
 * clients of a retry storm open them (Node's fetch), with `/healthz` probed beside it on its own
 * connections. The node's slots are free at the start, so the 9 creates that fit start their
 * avatars during the burst. The first burst of each fresh node is counted on its own (its code
 * is cold), then a second one.
 *
 * The node runs in a session of its own, as from a terminal, and so does the do-nothing server
 * below: on Linux with autogroups each is then a scheduling group apart from the bench's client.
 *
 * Beside it, in the same run: the same burst against a server that does nothing, while the 9
 * avatars of the node's first burst are live (what this machine leaves any server then), and on
 * the idle machine. The goal: the node's 429 p99 and `/healthz` p99 at most 1.5 times that
 * loaded floor's. On Linux it also says, burst by burst, how long the API process's main thread
 * ran and how long it waited for a core (schedstat), and its threads' CPU time.
 *
 *   BENCH_COLD_BURST_NODES  fresh nodes started one after another (default 2; 1 with --quick)
 *   BENCH_COLD_BURST_PROFILE  a directory: the node's API process writes a CPU profile there
 *   BENCH_BURST_CLIENT    fetch (default here: a new connection per create) or open (connections
 *                         opened before the clock, as burst.bench.ts sends them)
 *   BENCH_COLD_BURST_NODE_FLAGS  Node's or V8's flags for the API process (space-separated)
 *   BENCH_COLD_BURST_LOG  a file: the node runs with --verbose and its log lines go there (each
 *                         request's time inside the node is its line's `ms`)
 *
 * Run through `npm run bench -- coldBurst` (inside the benchmark network namespace).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  burstClient,
  burstFigures,
  createBurst,
  floorBurst,
  type BurstFigures,
  type BurstResult,
} from './support/createBurst.js';
import { QUICK, recordFigures } from './support/figures.js';
import { freePort } from './support/freePort.js';

const address = process.env.VISAGE_TEST_ADDRESS;
if (!address) throw new Error('run through `npm run bench` (needs the namespace address)');
const NODES = Number(process.env.BENCH_COLD_BURST_NODES ?? (QUICK ? 1 : 2));
const KEYS = 3;
const CAP = 3;
const CREATES = 300;
/** How long the avatars run before the loaded floor is measured (their starts are over). */
const LIVE_SETTLE_MS = 3_000;
const GOAL_RATIO = 1.5;
/** `fetch` by default here: a new connection per create, as a retry storm's clients open them. */
const CLIENT = burstClient(process.env.BENCH_BURST_CLIENT ?? 'fetch');
const profile = process.env.BENCH_COLD_BURST_PROFILE;
const logFile = process.env.BENCH_COLD_BURST_LOG;
const nodeFlags = (process.env.BENCH_COLD_BURST_NODE_FLAGS ?? '').split(' ').filter(Boolean);
setTimeout(() => {
  console.error('cold burst bench: took longer than 10 minutes; giving up');
  process.exit(1);
}, 600_000).unref();

/** `visage keys create` on `dataDir`: the new key's secret. */
function createKey(dataDir: string, name: string): string {
  const out = spawnSync(
    process.execPath,
    [
      'bin/visage.js',
      'keys',
      'create',
      '--name',
      name,
      '--cap',
      String(CAP),
      '--data-dir',
      dataDir,
    ],
    { encoding: 'utf8' },
  );
  const secret = /sk_[A-Za-z0-9]+/.exec(out.stdout)?.[0];
  if (out.status !== 0 || !secret) throw new Error(`keys create failed: ${out.stderr}`);
  return secret;
}

async function until200(url: string, child: { exitCode: number | null }): Promise<void> {
  for (const until = Date.now() + 180_000; Date.now() < until;) {
    if (child.exitCode !== null) throw new Error(`visage dev exited (${child.exitCode})`);
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await sleep(50);
  }
  throw new Error(`${url}: no 200 within 180 s`);
}

/**
 * What the node's API process had of the CPU so far (Linux; undefined elsewhere): its main
 * thread's (the event loop's) time on a core and time ready to run but waiting for one
 * (schedstat), and all its threads' CPU time (the database's thread included), in milliseconds,
 * in all and by thread (its name and id; the main thread's id is the process's).
 */
interface ApiCpu {
  ranMs: number;
  waitedMs: number;
  processMs: number;
  byThread: Record<string, number>;
}

/** A /proc stat line's utime + stime, in milliseconds (clock ticks of 10 ms). */
function cpuMsOf(stat: string): number {
  // utime and stime, the 14th and 15th fields: the 12th and 13th after the command's parenthesis.
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function apiCpu(pid: number): ApiCpu | undefined {
  try {
    const [ran, waited] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8')
      .split(' ')
      .map(Number);
    const byThread: Record<string, number> = {};
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
        const ms = cpuMsOf(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
        byThread[`${name} ${tid}`] = ms;
      } catch {
        // The thread ended meanwhile.
      }
    }
    return {
      ranMs: ran! / 1e6,
      waitedMs: waited! / 1e6,
      processMs: cpuMsOf(readFileSync(`/proc/${pid}/stat`, 'utf8')),
      byThread,
    };
  } catch {
    return undefined;
  }
}

function cpuSince(pid: number, from: ApiCpu | undefined): ApiCpu | undefined {
  const now = apiCpu(pid);
  if (!now || !from) return undefined;
  return {
    ranMs: now.ranMs - from.ranMs,
    waitedMs: now.waitedMs - from.waitedMs,
    processMs: now.processMs - from.processMs,
    byThread: Object.fromEntries(
      Object.entries(now.byThread).map(([name, ms]) => [name, ms - (from.byThread[name] ?? 0)]),
    ),
  };
}

interface FreshNode {
  first: BurstResult;
  second: BurstResult;
  loadedFloor: BurstFigures;
  /** From the start of `visage dev` until `/readyz` answered 200, ms. */
  readyMs: number;
  /** The API process over each burst, from its start until its last answer. */
  firstCpu?: ApiCpu;
  secondCpu?: ApiCpu;
}

/** A fresh `visage dev`, its first and second bursts, and the floor beside its live avatars. */
async function freshNode(): Promise<FreshNode> {
  const dataDir = mkdtempSync(join(tmpdir(), 'visage-cold-burst-'));
  const secrets = Array.from({ length: KEYS }, (_, i) => createKey(dataDir, `burst-${i}`));
  const [port, livekitPort] = [await freePort(), await freePort()];
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []),
      ...nodeFlags,
      'bin/visage.js',
      'dev',
      '--data-dir',
      dataDir,
      '--port',
      String(port),
      '--livekit-port',
      String(livekitPort),
      '--node-ip',
      address!,
      // Room for the 9 the keys allow (the default depends on the cores).
      '--max-sessions',
      String(KEYS * CAP),
      ...(logFile ? ['--verbose'] : []),
    ],
    {
      stdio: ['ignore', logFile ? 'pipe' : 'ignore', 'inherit'],
      // In a session of its own, as a user's terminal starts it, apart from the bench's client:
      // on Linux with autogroups a session is a scheduling group, and in the bench's the API
      // process shared one group's CPU with the client's 300 connects and the prober
      // (bench/results/2026-11-30-cold-burst.md).
      detached: true,
    },
  );
  if (logFile) child.stdout!.pipe(createWriteStream(logFile, { flags: 'a' }));
  const api = `http://127.0.0.1:${port}`;
  try {
    await until200(`${api}/readyz`, child);
    const readyMs = performance.now() - started;
    let loadedFloor: BurstFigures | undefined;
    let firstCpu: ApiCpu | undefined;
    let secondCpu: ApiCpu | undefined;
    const beforeFirst = apiCpu(child.pid!);
    const first = await createBurst({
      nodes: [api],
      secrets,
      creates: CREATES,
      client: CLIENT,
      answered: async () => {
        firstCpu = cpuSince(child.pid!, beforeFirst);
        await sleep(LIVE_SETTLE_MS);
        loadedFloor = await floorBurst(CREATES, KEYS, 1, CLIENT, true);
      },
    });
    const beforeSecond = apiCpu(child.pid!);
    const second = await createBurst({
      nodes: [api],
      secrets,
      creates: CREATES,
      client: CLIENT,
      answered: async () => {
        secondCpu = cpuSince(child.pid!, beforeSecond);
      },
    });
    for (const [name, r] of [
      ['first', first],
      ['second', second],
    ] as const) {
      // A 503 is a create whose avatar did not start within its bound (a busy machine): said,
      // not fatal. More than 9 created, or any other answer, is a broken cap.
      const { 503: unavailable = 0, ...others } = r.otherStatuses;
      if (unavailable > 0) console.log(`${name} burst: ${unavailable} create(s) answered 503`);
      if (r.created.length > KEYS * CAP || Object.keys(others).length > 0) {
        throw new Error(
          `the cap did not hold: ${r.created.length} created, others ${JSON.stringify(r.otherStatuses)}`,
        );
      }
      if (r.created.length < KEYS * CAP) {
        console.log(`${name} burst: ${r.created.length} of the ${KEYS * CAP} that fit created`);
      }
    }
    return { readyMs, first, second, loadedFloor: loadedFloor!, firstCpu, secondCpu };
  } finally {
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

const load = loadavg()[0]!.toFixed(1);
const idleFloor = await floorBurst(CREATES, KEYS, 1, CLIENT, true);
const nodes: FreshNode[] = [];
for (let i = 0; i < NODES; i++) nodes.push(await freshNode());
const first = burstFigures(nodes.map((n) => n.first));
const second = burstFigures(nodes.map((n) => n.second));
// Each node's floor beside its avatars; the goal is judged against the highest (the kindest).
const loadedFloors = nodes.map((n) => n.loadedFloor);
const worst = (pick: (f: BurstFigures) => number) => Math.max(...loadedFloors.map(pick));
const floorRefusedP99 = worst((f) => f.refusedP99Ms);
const floorHealthP99 = worst((f) => f.healthP99Ms);
const ms = (x: number) => (Number.isNaN(x) ? '—' : `${x.toFixed(0)} ms`);
const ratio = (x: number, floor: number) => `${(x / floor).toFixed(1)}x`;
console.log(
  `\n${CREATES} creates at once (client ${CLIENT}) against ${KEYS} keys with a cap of ${CAP}, on ${NODES} fresh \`visage dev\` node(s), as soon as /readyz answered; load average ${load} before the run`,
);
console.table({
  '429, p50': { first: ms(first.refusedP50Ms), second: ms(second.refusedP50Ms) },
  '429, p99': {
    first: ms(first.refusedP99Ms),
    second: ms(second.refusedP99Ms),
    'floor beside the 9 avatars (worst node)': ms(floorRefusedP99),
    'idle floor': ms(idleFloor.refusedP99Ms),
    'first / floor (goal <= 1.5)': ratio(first.refusedP99Ms, floorRefusedP99),
    'second / floor': ratio(second.refusedP99Ms, floorRefusedP99),
  },
  '/healthz, p50': { first: ms(first.healthP50Ms), second: ms(second.healthP50Ms) },
  '/healthz, p99': {
    first: ms(first.healthP99Ms),
    second: ms(second.healthP99Ms),
    'floor beside the 9 avatars (worst node)': ms(floorHealthP99),
    'idle floor': ms(idleFloor.healthP99Ms),
    'first / floor (goal <= 1.5)': ratio(first.healthP99Ms, floorHealthP99),
    'second / floor': ratio(second.healthP99Ms, floorHealthP99),
  },
  '201, p50': { first: ms(first.createdP50Ms), second: ms(second.createdP50Ms) },
  '201, max': { first: ms(first.createdMaxMs), second: ms(second.createdMaxMs) },
});
for (const [i, n] of nodes.entries()) {
  console.log(
    `node ${i + 1}: /readyz answered 200 ${(n.readyMs / 1000).toFixed(1)} s after its start`,
  );
  for (const [name, c] of [
    ['first', n.firstCpu],
    ['second', n.secondCpu],
  ] as const) {
    if (!c) continue;
    console.log(
      `node ${i + 1}, ${name} burst (until its last answer): the API's main thread ran ${c.ranMs.toFixed(0)} ms and waited ${c.waitedMs.toFixed(0)} ms for a core; the API process's threads ${c.processMs.toFixed(0)} ms of CPU (${Object.entries(
        c.byThread,
      )
        .filter(([, ms]) => ms > 0)
        .sort(([, a], [, b]) => b - a)
        .map(([name, ms]) => `${name} ${ms} ms`)
        .join(', ')})`,
    );
  }
}
const met =
  first.refusedP99Ms <= GOAL_RATIO * floorRefusedP99 &&
  first.healthP99Ms <= GOAL_RATIO * floorHealthP99;
console.log(
  `goal (first burst within ${GOAL_RATIO}x the loaded floor): ${met ? 'met' : 'NOT met'}`,
);
await recordFigures('coldBurst', {
  load: Number(load),
  first,
  second,
  loadedFloors,
  idleFloor,
  apiCpu: nodes.map((n) => ({ first: n.firstCpu, second: n.secondCpu })),
  readyMs: nodes.map((n) => Math.round(n.readyMs)),
  goalMet: met,
});
process.exit(0);
