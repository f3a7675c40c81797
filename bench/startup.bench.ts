// SPDX-License-Identifier: GPL-3.0-or-later
// `npm run bench -- startup`: how long `visage dev` takes to start, as a user runs it
// (bin/visage.js, the build in dist/), on a fresh data directory (cold: the database is made,
// from the template `npm ci` prepared, and the avatars are drawn) and again on the same one
// (warm), with the machine as it is and with two busy processes beside it (`yes >/dev/null`,
// twice). Each start is timed to its first `200` from /healthz (liveness) and from /readyz
// (readiness); the node listens once it is ready, so the two differ by a request. The database
// step's own time is the one `visage dev` prints. BENCH_STARTUP_ROUNDS (3; 1 with --quick).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { databaseTemplateDir } from '../src/cli/databaseTemplateDir.js';
import { databaseTemplateName } from '../src/server/store/databaseTemplate.js';
import { QUICK, median, recordFigures } from './support/figures.js';

const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? (QUICK ? 1 : 3));
const TIMEOUT_MS = 180_000;

interface Start {
  healthzS: number;
  readyzS: number;
  databaseS: number;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function until200(url: string, t0: number, child: ChildProcess): Promise<number> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`visage dev exited (${child.exitCode})`);
    if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`${url}: no answer`);
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return (performance.now() - t0) / 1000;
    await sleep(25);
  }
}

/** One `visage dev` start on `dataDir`, timed, then Ctrl-C. */
async function start(dataDir: string): Promise<Start> {
  const [port, livekitPort] = [await freePort(), await freePort()];
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    ['bin/visage.js', 'dev', '--data-dir', dataDir, '--port', String(port)].concat([
      '--livekit-port',
      String(livekitPort),
    ]),
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  try {
    const healthzS = await until200(`http://127.0.0.1:${port}/healthz`, t0, child);
    const readyzS = await until200(`http://127.0.0.1:${port}/readyz`, t0, child);
    const db = /database\s+(?:created|opened)\S*(?: from the template)? in (\d+\.\d) s/.exec(out);
    return { healthzS, readyzS, databaseS: db ? Number(db[1]) : NaN };
  } finally {
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

function busy(n: number): ChildProcess[] {
  return Array.from({ length: n }, () =>
    spawn('sh', ['-c', 'exec yes >/dev/null'], { stdio: 'ignore' }),
  );
}

const templates = databaseTemplateDir();
const template = templates && existsSync(join(templates, databaseTemplateName(), 'PG_VERSION'));
console.log(
  `visage dev start-up: ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ` +
    `load average ${loadavg()[0]!.toFixed(1)} before; database template ${template ? 'present' : 'ABSENT (run npm run build)'}; ${ROUNDS} rounds`,
);

const results: Record<string, Start[]> = {};
for (const [label, hogs] of [
  ['as it is', 0],
  ['two busy processes', 2],
] as const) {
  const running = busy(hogs);
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const dir = mkdtempSync(join(tmpdir(), 'visage-startup-'));
      try {
        const load = loadavg()[0]!.toFixed(1);
        const cold = await start(dir);
        const warm = await start(dir);
        (results[`cold, ${label}`] ??= []).push(cold);
        (results[`warm, ${label}`] ??= []).push(warm);
        console.log(
          `  ${label}, round ${round + 1} (load ${load}): cold ${cold.readyzS.toFixed(1)} s ` +
            `(database ${cold.databaseS} s), warm ${warm.readyzS.toFixed(1)} s ` +
            `(database ${warm.databaseS} s)`,
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    for (const p of running) p.kill('SIGKILL');
  }
}

const span = (xs: number[]) =>
  `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)})`;
console.log('\n| start | /healthz 200, s: median (min-max) | /readyz 200, s | database step, s |');
console.log('| --- | --- | --- | --- |');
for (const [name, starts] of Object.entries(results)) {
  console.log(
    `| ${name} | ${span(starts.map((s) => s.healthzS))} | ${span(starts.map((s) => s.readyzS))} | ${span(starts.map((s) => s.databaseS))} |`,
  );
}
await recordFigures(
  'startup',
  Object.fromEntries(
    Object.entries(results).map(([name, starts]) => [
      name,
      {
        healthz_s: starts.map((s) => s.healthzS),
        readyz_s: starts.map((s) => s.readyzS),
        database_s: starts.map((s) => s.databaseS),
      },
    ]),
  ),
);
