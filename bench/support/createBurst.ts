// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * A burst of session creates against keys at a small cap (a retry storm looks like this), with a
 * health probe beside it: every create is sent at once, spread over the keys and the nodes, and
 * `GET /healthz` is asked every PROBE_EVERY_MS from a thread of its own (its own event loop, so
 * that the bench's 300 requests do not delay the probe's clock) until the last create answered.
 * The sessions created are deleted afterwards. Latencies are the HTTP round trip at the caller,
 * by default on connections opened before the burst, by a client that does next to nothing
 * (`BurstClient`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import type { BurstBaseline } from './burstBaseline.js';
import { OpenConnection, type RawAnswer } from './openConnections.js';

const PROBE_EVERY_MS = 20;

export interface BurstOptions {
  /** API base URLs; creates go to them in turn. */
  nodes: string[];
  /** One secret per key; creates go to them in turn. */
  secrets: string[];
  creates: number;
  /** How the creates are sent (default `open`). */
  client?: BurstClient;
  /** Called once every create has answered, before the sessions created are deleted. */
  answered?: () => Promise<void>;
}

export interface BurstResult {
  /** Milliseconds of each create answered 429, and of each answered 201. */
  refused: number[];
  created: number[];
  /** Every other status, with its count (none expected). */
  otherStatuses: Record<number, number>;
  /** Milliseconds of each health probe sent while the burst ran. */
  health: number[];
  /** Probes that got no answer (why, and after how long), or an answer that is not 200. */
  healthFailures: string[];
  /** From the first create sent to the last answer. */
  wallMs: number;
}

/**
 * The health prober: a loop in a worker thread, reporting each probe's round trip and when it was
 * sent (epoch ms). It first asks each URL once, untimed, and says `ready`: the first `fetch` in a
 * thread loads its HTTP client (tens of milliseconds on this VM), which is the prober's cost, not
 * the node's.
 */
const PROBER = `
const { parentPort, workerData } = require('node:worker_threads');
const { setTimeout: sleep } = require('node:timers/promises');
let stopped = false;
parentPort.on('message', () => { stopped = true; });
(async () => {
  for (const url of workerData.urls) await (await fetch(url)).arrayBuffer();
  parentPort.postMessage({ ready: true });
  while (!stopped) {
    for (const url of workerData.urls) {
      const at = performance.timeOrigin + performance.now();
      const t0 = performance.now();
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(10000) });
        await res.arrayBuffer();
        parentPort.postMessage({ at, ms: performance.now() - t0, ok: res.ok, why: String(res.status) });
      } catch (err) {
        const why = String(err && err.cause ? err.cause.code || err.cause.message : err);
        parentPort.postMessage({ at, ms: performance.now() - t0, ok: false, why });
      }
    }
    await sleep(workerData.everyMs);
  }
  parentPort.postMessage({ done: true });
})();
`;

interface ProbeMessage {
  ready?: boolean;
  done?: boolean;
  at?: number;
  ms?: number;
  ok?: boolean;
  why?: string;
}

export async function createBurst(o: BurstOptions): Promise<BurstResult> {
  const health: number[] = [];
  const prober = new Worker(PROBER, {
    eval: true,
    workerData: { urls: o.nodes.map((n) => `${n}/healthz`), everyMs: PROBE_EVERY_MS },
  });
  const healthFailures: string[] = [];
  // Probes sent from the burst's start on count; those before it only keep the prober going.
  let burstAt = Infinity;
  let markReady: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const probed = new Promise<void>((resolve, reject) => {
    prober.on('message', (m: ProbeMessage) => {
      if (m.ready) markReady();
      else if (m.done) resolve();
      else if (m.at! < burstAt) return;
      else if (m.ok) health.push(m.ms!);
      else healthFailures.push(`${m.why} after ${m.ms!.toFixed(0)} ms`);
    });
    prober.on('error', reject);
  });
  const body = JSON.stringify({ avatar_id: AVATAR_CATALOGUE[0]!.avatarId, mode: 'video' });
  const requests = await Promise.all(
    Array.from({ length: o.creates }, async (_, i) => {
      const node = o.nodes[i % o.nodes.length]!;
      const secret = o.secrets[i % o.secrets.length]!;
      const send = await preparedCreate(o.client ?? 'open', node, secret, body);
      return { node, secret, send };
    }),
  );
  // The probe runs a moment before the burst, so that it is there when the burst starts.
  await Promise.race([ready, probed]);
  await sleep(2 * PROBE_EVERY_MS);
  burstAt = performance.timeOrigin + performance.now();
  const started = performance.now();
  const answers = await Promise.all(
    requests.map(async ({ node, secret, send }) => {
      const { status, body, ms } = await send();
      const id =
        status === 201 ? (JSON.parse(body) as { session_id?: string }).session_id : undefined;
      return { status, ms, node, secret, id };
    }),
  );
  const wallMs = performance.now() - started;
  prober.postMessage('stop');
  await probed;
  await prober.terminate();
  await o.answered?.();
  for (const a of answers) {
    if (a.status !== 201 || !a.id) continue;
    const res = await fetch(`${a.node}/v1/sessions/${a.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${a.secret}` },
    });
    if (res.status !== 204) throw new Error(`DELETE answered ${res.status}`);
  }
  const otherStatuses: Record<number, number> = {};
  for (const a of answers) {
    if (a.status !== 201 && a.status !== 429)
      otherStatuses[a.status] = (otherStatuses[a.status] ?? 0) + 1;
  }
  return {
    refused: answers.filter((a) => a.status === 429).map((a) => a.ms),
    created: answers.filter((a) => a.status === 201).map((a) => a.ms),
    otherStatuses,
    health,
    healthFailures,
    wallMs,
  };
}

/**
 * How the burst's requests are sent. `open` (the default): one connection per create opened
 * before the clock starts (a client's keep-alive pool), each request's bytes made beforehand, by
 * a client that does next to nothing (openConnections.ts). `fetch`: Node's `fetch`, a new
 * connection per create within the clock, as the figures before 2026-11-28 (afternoon) were
 * taken; on two cores the client's own work then weighs on every figure, the floor included.
 */
export type BurstClient = 'open' | 'fetch';

/** The client named by BENCH_BURST_CLIENT (default `open`). */
export function burstClient(name: string | undefined): BurstClient {
  if (name === undefined || name === 'open' || name === 'fetch') return name ?? 'open';
  throw new Error(`BENCH_BURST_CLIENT is open or fetch, not ${name}`);
}

/** One create, ready to be sent and timed. */
async function preparedCreate(
  client: BurstClient,
  node: string,
  secret: string,
  body: string,
): Promise<() => Promise<RawAnswer>> {
  const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
  if (client === 'fetch') {
    return async () => {
      const t0 = performance.now();
      const res = await fetch(`${node}/v1/sessions`, { method: 'POST', headers, body });
      const text = await res.text();
      return { status: res.status, body: text, ms: performance.now() - t0 };
    };
  }
  const connection = await OpenConnection.open(node);
  const bytes = connection.request('POST', '/v1/sessions', headers, body);
  return async () => {
    try {
      return await connection.send(bytes);
    } finally {
      connection.close();
    }
  };
}

/** An HTTP server that answers every request at once (429, or 200 on /healthz), doing nothing. */
const NOTHING_SERVER = `
const s = require('node:http').createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(req.url === '/healthz' ? 200 : 429, { 'content-type': 'application/json' });
    res.end('{}');
  });
});
s.listen(0, '127.0.0.1', () => console.log('http://127.0.0.1:' + s.address().port));
`;

/**
 * The same burst against a server that does nothing (its own process): what this machine and
 * this client cost by themselves, the floor under any node's figures. `ownSession`: the server
 * runs in a session of its own, as the node it is compared with (on Linux with autogroups, a
 * scheduling group apart from the bench's client).
 */
export async function floorBurst(
  creates: number,
  keys: number,
  rounds: number,
  client: BurstClient = 'open',
  ownSession = false,
) {
  const child = spawn(process.execPath, ['-e', NOTHING_SERVER], {
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: ownSession,
  });
  try {
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const url = (await lines.next()).value as string;
    const results: BurstResult[] = [];
    const secrets = Array.from({ length: keys }, (_, i) => `sk_floor${i}`);
    for (let i = 0; i < rounds; i++)
      results.push(await createBurst({ nodes: [url], secrets, creates, client }));
    return burstFigures(results);
  } finally {
    child.kill();
    await once(child, 'exit');
  }
}

/** Nearest-rank percentile (p in 0..100). */
export function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ??
    NaN
  );
}

/** The figures a burst is judged by. */
export function burstFigures(results: BurstResult[]) {
  const all = (pick: (r: BurstResult) => number[]) => results.flatMap(pick);
  const refused = all((r) => r.refused);
  const created = all((r) => r.created);
  const health = all((r) => r.health);
  return {
    rounds: results.length,
    refusedCount: refused.length,
    createdCount: created.length,
    refusedP50Ms: percentile(refused, 50),
    refusedP90Ms: percentile(refused, 90),
    refusedP99Ms: percentile(refused, 99),
    healthP50Ms: percentile(health, 50),
    healthP99Ms: percentile(health, 99),
    healthMaxMs: percentile(health, 100),
    healthProbes: health.length,
    healthFailed: results.flatMap((r) => r.healthFailures).length,
    createdP50Ms: percentile(created, 50),
    createdMaxMs: percentile(created, 100),
    wallP50Ms: percentile(
      results.map((r) => r.wallMs),
      50,
    ),
  };
}
export type BurstFigures = ReturnType<typeof burstFigures>;

/** Goals of issue 34: a refusal under 50 ms at p99, the health check under 100 ms at p99. */
export const BURST_GOALS = { refusedP99Ms: 50, healthP99Ms: 100 };

/**
 * The figures before and now, side by side, with the goals and whether they are met, and the
 * floor: the same burst against a server that does nothing, on this machine now; and, when
 * given, that floor measured while the node's avatars of a burst are live beside it (what the
 * machine leaves any server while it runs them).
 */
export function printBurst(
  baseline: BurstBaseline | null,
  now: BurstFigures,
  results: BurstResult[],
  floor: BurstFigures,
  loadedFloor?: BurstFigures,
): void {
  const ms = (x: number | undefined) =>
    x === undefined || Number.isNaN(x) ? '—' : `${x.toFixed(1)} ms`;
  const before = baseline?.figures;
  if (baseline) {
    console.log(
      `before: ${baseline.measured} (its floor: a 429 in ${baseline.floorRefusedP99Ms.toFixed(0)} ms at p99)`,
    );
  }
  const row = (goal: number | null, pick: (f: BurstBaseline['figures']) => number) => ({
    before: ms(before ? pick(before) : undefined),
    now: ms(pick(now)),
    'floor (a server doing nothing)': ms(pick(floor)),
    ...(loadedFloor ? { 'floor, beside the admitted avatars': ms(pick(loadedFloor)) } : {}),
    goal: goal === null ? '' : `< ${goal} ms`,
    met: goal === null ? '' : pick(now) < goal ? 'yes' : 'NO',
  });
  const failures = results.flatMap((r) => r.healthFailures);
  if (failures.length > 0) console.log(`health probes that failed: ${failures.join('; ')}`);
  console.table({
    '429, p50': row(null, (f) => f.refusedP50Ms),
    '429, p90': row(null, (f) => f.refusedP90Ms),
    '429, p99': row(BURST_GOALS.refusedP99Ms, (f) => f.refusedP99Ms),
    '/healthz during the burst, p50': row(null, (f) => f.healthP50Ms),
    '/healthz during the burst, p99': row(BURST_GOALS.healthP99Ms, (f) => f.healthP99Ms),
    '/healthz during the burst, max': row(null, (f) => f.healthMaxMs),
    '201 (created), p50': row(null, (f) => f.createdP50Ms),
    '201 (created), max': row(null, (f) => f.createdMaxMs),
    'the whole burst, p50': row(null, (f) => f.wallP50Ms),
  });
}

/** What the node saw of its bursts (bench/support/burstNode.ts): its own share of each latency. */
export function insideFigures(
  records: {
    byStatus: Record<string, number[]>;
    health: number[];
    loopDelay: { p99: number; max: number };
  }[],
) {
  const all = (status: string) => records.flatMap((r) => r.byStatus[status] ?? []);
  const health = records.flatMap((r) => r.health);
  return {
    refusedP50Ms: percentile(all('429'), 50),
    refusedP99Ms: percentile(all('429'), 99),
    createdP50Ms: percentile(all('201'), 50),
    healthP99Ms: percentile(health, 99),
    loopDelayP99Ms: Math.max(...records.map((r) => r.loopDelay.p99)),
    loopDelayMaxMs: Math.max(...records.map((r) => r.loopDelay.max)),
  };
}
export type InsideFigures = ReturnType<typeof insideFigures>;

/**
 * The node's own share: each request's time from the moment its listener had it to its answer
 * (its request log line), and how late its event loop ran. The rest of a latency above is the
 * wait before the node read the request (the event loop, the machine, the client: see the floor).
 */
export function printInside(f: InsideFigures): void {
  const ms = (x: number) => (Number.isNaN(x) ? '—' : `${x.toFixed(1)} ms`);
  console.log('inside the node (its request log and its event loop), over the same bursts:');
  console.table({
    '429, p50': { 'inside the node': ms(f.refusedP50Ms) },
    '429, p99': { 'inside the node': ms(f.refusedP99Ms) },
    '/healthz, p99': { 'inside the node': ms(f.healthP99Ms) },
    '201 (created), p50': { 'inside the node': ms(f.createdP50Ms) },
    'event loop delay, p99': { 'inside the node': ms(f.loopDelayP99Ms) },
    'event loop delay, max': { 'inside the node': ms(f.loopDelayMaxMs) },
  });
}
