// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * A burst of creates against keys at their cap, as a retry storm sends them (issue 34): three
 * keys with a cap of 3, 300 `POST /v1/sessions` at once, and `GET /healthz` probed every 20 ms
 * beside it. One Visage node as `visage dev` runs it (bench/support/burstNode.ts: the embedded
 * database, the embedded LiveKit server in its own process, the real media core in one worker
 * process): the 9 creates that fit start real avatars. Printed beside the figures measured
 * before the fast refusal (bench/support/burstBaseline.ts); the goals: a 429 under 50 ms and
 * `/healthz` under 100 ms at p99, and the creates that succeed as fast as a create alone. Beside
 * them, two floors: the same burst against a server that answers without doing anything, which
 * says what this machine and this client cost by themselves, and the same again while the node
 * runs the 9 avatars (what the machine leaves any server beside them). The cluster's burst
 * (PostgreSQL) is in cluster.bench.ts.
 *
 *   BENCH_BURST_ROUNDS   bursts (default 3; 1 with --quick)
 *   BENCH_BURST_PROFILE  a directory: the node writes a CPU profile of its run there
 *   BENCH_BURST_CLIENT   open (default: connections opened before the burst) or fetch (Node's
 *                        fetch, a connection per create, as the figures "before" were taken)
 *
 * Run through `npm run bench -- burst` (inside the benchmark network namespace).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { BURST_BEFORE } from './support/burstBaseline.js';
import {
  burstClient,
  burstFigures,
  createBurst,
  floorBurst,
  insideFigures,
  printBurst,
  printInside,
  type BurstFigures,
  type BurstResult,
} from './support/createBurst.js';
import type { NodeRecord } from './support/burstNode.js';
import { QUICK, median, recordFigures } from './support/figures.js';
import { AVATAR_CATALOGUE } from '../src/media/avatarCatalogue.js';

const address = process.env.VISAGE_TEST_ADDRESS;
if (!address) throw new Error('run through `npm run bench` (needs the namespace address)');
const ROUNDS = Number(process.env.BENCH_BURST_ROUNDS ?? (QUICK ? 1 : 3));
const KEYS = 3;
const CAP = 3;
const CREATES = 300;
const CLIENT = burstClient(process.env.BENCH_BURST_CLIENT);
/** How long the avatars of the loaded floor run before it is measured (their starts are over). */
const LIVE_SETTLE_MS = 3_000;
// Bound the whole run: a stuck node must not hang `npm run bench`.
setTimeout(() => {
  console.error('burst bench: took longer than 5 minutes; giving up');
  process.exit(1);
}, 300_000).unref();

const profile = process.env.BENCH_BURST_PROFILE;
const child = spawn(
  process.execPath,
  [
    ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []),
    '--import',
    'tsx',
    'bench/support/burstNode.ts',
    address,
    String(KEYS),
    String(CAP),
  ],
  { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, NODE_ENV: 'production' } },
);
const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
const ready = (await lines.next()).value as string | undefined;
if (!ready) throw new Error('the node exited before it was ready');
const node = JSON.parse(ready) as { apiUrl: string; secrets: string[] };
try {
  const secrets = node.secrets;

  // A create alone (and its delete), for the creates within the burst to be compared with.
  const alone: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const res = await fetch(`${node.apiUrl}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secrets[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ avatar_id: AVATAR_CATALOGUE[0]!.avatarId, mode: 'video' }),
    });
    const { session_id: id } = (await res.json()) as { session_id: string };
    if (res.status !== 201) throw new Error(`a create alone answered ${res.status}`);
    alone.push(performance.now() - t0);
    await fetch(`${node.apiUrl}/v1/sessions/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${secrets[0]}` },
    });
  }

  const results: BurstResult[] = [];
  const inside: NodeRecord[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    child.stdin!.write('start\n');
    const r = await createBurst({
      nodes: [node.apiUrl],
      secrets,
      creates: CREATES,
      client: CLIENT,
      // The node's record of the burst, before the deletes that follow it.
      answered: async () => {
        child.stdin!.write('report\n');
        inside.push(JSON.parse((await lines.next()).value as string) as NodeRecord);
      },
    });
    if (r.created.length !== KEYS * CAP || Object.keys(r.otherStatuses).length > 0) {
      throw new Error(
        `the cap did not hold: ${r.created.length} created, others ${JSON.stringify(r.otherStatuses)}`,
      );
    }
    results.push(r);
  }
  // The creates that fit, sent at once without the refused ones: what the burst's 201s are
  // compared with (the goal: the refused creates do not slow the ones that succeed).
  const fitAlone: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const r = await createBurst({
      nodes: [node.apiUrl],
      secrets,
      creates: KEYS * CAP,
      client: CLIENT,
    });
    if (r.created.length !== KEYS * CAP) throw new Error(`${r.created.length} of the 9 created`);
    fitAlone.push(...r.created);
  }
  const fitAloneFigures = { createdP50Ms: median(fitAlone), createdMaxMs: Math.max(...fitAlone) };
  const now = burstFigures(results);
  const floor = await floorBurst(CREATES, KEYS, ROUNDS, CLIENT);
  // The same floor while the node holds the creates that fit, live (their avatars in their rooms,
  // as during and after a burst): what this machine leaves any server while it runs them.
  let loadedFloor: BurstFigures | undefined;
  await createBurst({
    nodes: [node.apiUrl],
    secrets,
    creates: KEYS * CAP,
    client: CLIENT,
    answered: async () => {
      await sleep(LIVE_SETTLE_MS);
      loadedFloor = await floorBurst(CREATES, KEYS, ROUNDS, CLIENT);
    },
  });
  console.log(
    `\n${CREATES} creates at once against ${KEYS} keys with a cap of ${CAP}, one node (embedded database), ${ROUNDS} burst(s), client ${CLIENT}; a create alone: ${median(alone).toFixed(0)} ms (median of 3)`,
  );
  printBurst(BURST_BEFORE.embedded, now, results, floor, loadedFloor);
  console.log(
    `the ${KEYS * CAP} creates that fit, sent at once without the refused ones: 201 in ${fitAloneFigures.createdP50Ms.toFixed(0)} ms at the median, ${fitAloneFigures.createdMaxMs.toFixed(0)} ms at most (within the burst: ${now.createdP50Ms.toFixed(0)} and ${now.createdMaxMs.toFixed(0)} ms)`,
  );
  const seenInside = insideFigures(inside);
  printInside(seenInside);
  // The first burst after the node's start meets its code cold (not yet optimised by the JIT);
  // a retry storm's later waves find it warm.
  const byBurst = results.map((r) => burstFigures([r]));
  console.log(
    `at the caller, burst by burst: 429 p99 ${byBurst.map((f) => `${f.refusedP99Ms.toFixed(0)} ms`).join(', ')}; /healthz p99 ${byBurst.map((f) => `${f.healthP99Ms.toFixed(0)} ms`).join(', ')}`,
  );
  console.log(
    `event loop delay at most, burst by burst: ${inside.map((r) => `${r.loopDelay.max.toFixed(0)} ms`).join(', ')}`,
  );
  if (inside.every((r) => r.loopThread)) {
    console.log(
      `the event loop's thread, burst by burst (to the last answer): ${inside.map((r) => `ran ${r.loopThread!.ranMs} ms and waited ${r.loopThread!.waitedMs} ms for a core`).join('; ')}`,
    );
  }
  await recordFigures('burst', {
    embedded: now,
    floor,
    loadedFloor,
    inside: seenInside,
    loopThread: inside.map((r) => r.loopThread ?? null),
    byBurst: byBurst.map((f) => ({ refusedP99Ms: f.refusedP99Ms, healthP99Ms: f.healthP99Ms })),
    fitAlone: fitAloneFigures,
    createAloneMs: median(alone),
  });
} finally {
  child.stdin!.write('quit\n');
  await once(child, 'exit');
}
process.exit(0);
