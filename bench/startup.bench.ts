// SPDX-License-Identifier: GPL-3.0-or-later
// `npm run bench -- startup`: how long `visage dev` takes to start, as a user runs it
// (bin/visage.js, the build in dist/), on a fresh data directory (cold: the database is made,
// from the template `npm ci` prepared, and the avatars are drawn) and again on the same one
// (warm), with the machine as it is and with two busy processes beside it (`yes >/dev/null`,
// twice). Each start is timed from the spawn to its first `200` from /healthz (the node
// listens: its database is open), to the banner (the API and the LiveKit server are ready: what
// the developer waits for), and to its first `200` from /readyz (the media processes are ready
// too, so a session starts without waiting for them; they start behind the banner). The
// database step's own time is the one `visage dev` prints. BENCH_STARTUP_ROUNDS (3; 1 with
// --quick).
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { databaseTemplateDir } from '../src/cli/databaseTemplateDir.js';
import { databaseTemplateName } from '../src/server/store/databaseTemplate.js';
import { QUICK, median, recordFigures } from './support/figures.js';
import { freePort } from './support/freePort.js';

const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? (QUICK ? 1 : 3));
const TIMEOUT_MS = 180_000;

interface Start {
  healthzS: number;
  bannerS: number;
  readyzS: number;
  databaseS: number;
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

async function untilPrinted(
  out: () => string,
  line: RegExp,
  t0: number,
  child: ChildProcess,
): Promise<number> {
  for (;;) {
    if (line.test(out())) return (performance.now() - t0) / 1000;
    if (child.exitCode !== null) throw new Error(`visage dev exited (${child.exitCode})`);
    if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`${String(line)}: not printed`);
    await sleep(10);
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
    const [healthzS, bannerS, readyzS] = await Promise.all([
      until200(`http://127.0.0.1:${port}/healthz`, t0, child),
      untilPrinted(() => out, /Press Ctrl-C/, t0, child),
      until200(`http://127.0.0.1:${port}/readyz`, t0, child),
    ]);
    const db = /database\s+(?:created|opened)\S*(?: from the template)? in (\d+\.\d) s/.exec(out);
    return { healthzS, bannerS, readyzS, databaseS: db ? Number(db[1]) : NaN };
  } finally {
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

/**
 * This machine's floor in the same conditions: the spawn to a first `200` of a Node HTTP server
 * that does nothing, of the embedded LiveKit server alone (`visage livekit`), and of a Node
 * process that opens the warm start's database with PGlite and then listens. A warm banner
 * cannot come before the LiveKit server and the database are up.
 */
interface Floor {
  nodeS: number;
  livekitS: number;
  databaseS: number;
}

async function timedTo200(args: string[], port: number): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { stdio: 'ignore' });
  try {
    return await until200(`http://127.0.0.1:${port}/`, t0, child);
  } finally {
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

async function floor(dataDir: string): Promise<Floor> {
  const listen = (port: number) =>
    `require('node:http').createServer((q, r) => r.end('ok')).listen(${port}, '127.0.0.1')`;
  const port = await freePort();
  const nodeS = await timedTo200(['-e', listen(port)], port);
  const lk = await freePort();
  const livekitS = await timedTo200(['bin/visage.js', 'livekit', '--port', String(lk)], lk);
  const db = await freePort();
  const copy = mkdtempSync(join(tmpdir(), 'visage-startup-floor-'));
  try {
    cpSync(join(dataDir, 'db'), copy, { recursive: true });
    const open =
      `import('@electric-sql/pglite').then(async ({ PGlite }) => { ` +
      `const pg = new PGlite(${JSON.stringify(copy)}); await pg.waitReady; ` +
      `await pg.query('select 1'); ${listen(db)} })`;
    const databaseS = await timedTo200(['-e', open], db);
    return { nodeS, livekitS, databaseS };
  } finally {
    rmSync(copy, { recursive: true, force: true });
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
const floors: Record<string, Floor[]> = {};
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
        const floorNow = await floor(dir);
        (results[`cold, ${label}`] ??= []).push(cold);
        (results[`warm, ${label}`] ??= []).push(warm);
        (floors[label] ??= []).push(floorNow);
        console.log(
          `  ${label}, round ${round + 1} (load ${load}): cold: banner ${cold.bannerS.toFixed(1)} s, ` +
            `sessions ${cold.readyzS.toFixed(1)} s (database ${cold.databaseS} s); warm: banner ` +
            `${warm.bannerS.toFixed(1)} s, sessions ${warm.readyzS.toFixed(1)} s (database ` +
            `${warm.databaseS} s); floor: node ${floorNow.nodeS.toFixed(1)} s, LiveKit alone ` +
            `${floorNow.livekitS.toFixed(1)} s, database alone ${floorNow.databaseS.toFixed(1)} s`,
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
console.log(
  '\n| start | /healthz 200 (listening), s: median (min-max) | banner, s (goal: 3 warm, 10 cold) | /readyz 200 (media processes ready), s | database step, s |',
);
console.log('| --- | --- | --- | --- | --- |');
for (const [name, starts] of Object.entries(results)) {
  const col = (f: (s: Start) => number) => span(starts.map(f));
  console.log(
    `| ${name} | ${col((s) => s.healthzS)} | ${col((s) => s.bannerS)} | ${col((s) => s.readyzS)} | ${col((s) => s.databaseS)} |`,
  );
}
console.log(
  '\n| floor, same run | a do-nothing Node server, s | the embedded LiveKit alone, s | PGlite opening the warm database, s |',
);
console.log('| --- | --- | --- | --- |');
for (const [label, fs] of Object.entries(floors)) {
  const col = (f: (x: Floor) => number) => span(fs.map(f));
  console.log(
    `| ${label} | ${col((f) => f.nodeS)} | ${col((f) => f.livekitS)} | ${col((f) => f.databaseS)} |`,
  );
}
const figures: Record<string, Record<string, number[]>> = {};
for (const [name, starts] of Object.entries(results)) {
  figures[name] = {
    healthz_s: starts.map((s) => s.healthzS),
    banner_s: starts.map((s) => s.bannerS),
    readyz_s: starts.map((s) => s.readyzS),
    database_s: starts.map((s) => s.databaseS),
  };
}
for (const [label, fs] of Object.entries(floors)) {
  figures[`floor, ${label}`] = {
    node_s: fs.map((f) => f.nodeS),
    livekit_s: fs.map((f) => f.livekitS),
    database_s: fs.map((f) => f.databaseS),
  };
}
await recordFigures('startup', figures);
