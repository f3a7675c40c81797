// SPDX-License-Identifier: GPL-3.0-or-later
// What unwatched avatars cost `visage dev`, measured from outside as an operator would: a fresh
// data directory, a key made with the CLI, `visage dev` started, N sessions created that nobody
// joins, then the CPU of its whole process tree (API, media processes, embedded LiveKit) over a
// window once LiveKit's dynacast wait (10 s) is over; then a viewer joins one session and the
// time from its connect to its first video frame, and its frame rate, are printed; then, in the
// same run, the floor: N rtc-node participants that do nothing, with no track, with a silent
// audio track, and with both of an avatar's tracks never fed (bench/support/connectedRooms.ts).
// Run with `npm run bench -- unwatched` (BENCH_UNWATCHED=N sessions, default 8;
// BENCH_UNWATCHED_WINDOW_S, default 30). Needs `npm run build` first (bin/visage.js runs dist/).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Room,
  RoomEvent,
  TrackKind,
  VideoStream,
  dispose,
  type RemoteTrack,
} from '@livekit/rtc-node';

const N = Number(process.env.BENCH_UNWATCHED ?? 8);
const WINDOW_S = Number(process.env.BENCH_UNWATCHED_WINDOW_S ?? 30);
const address = process.env.VISAGE_TEST_ADDRESS ?? '127.0.0.1';
const dataDir = mkdtempSync(join(tmpdir(), 'visage-unwatched-'));
const port = 18080 + Math.floor(Math.random() * 1000);
const lkPort = port + 1000;
const cli = (args: string[]) =>
  execFileSync('node', ['bin/visage.js', ...args, '--data-dir', dataDir], { encoding: 'utf8' });
const key = /sk_[A-Za-z0-9_-]+/.exec(
  cli(['keys', 'create', '--name', 'bench', '--cap', String(N + 1)]),
)![0];
const dev = spawn(
  'node',
  [
    'bin/visage.js',
    'dev',
    '--data-dir',
    dataDir,
    '--host',
    address,
    '--port',
    String(port),
    '--livekit-port',
    String(lkPort),
    '--node-ip',
    address,
    '--livekit-host',
    address,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
let banner = '';
dev.stdout.on('data', (d: Buffer) => (banner += d.toString()));
const api = `http://${address}:${port}`;
for (let i = 0; ; i++) {
  if (banner.includes('Ctrl-C')) break;
  if (i > 600) throw new Error(`visage dev did not start:\n${banner}`);
  await sleep(100);
}

/** CPU time (ms) of a process and all its descendants, from /proc (with each one's). */
function treeCpuMs(root: number, each = new Map<number, number>()): number {
  const children = new Map<number, number[]>();
  const cpu = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const f = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ');
      const ppid = Number(f[1]);
      // utime + stime, and cutime + cstime: the time of children that exited and were
      // reaped (a short-lived helper's CPU would otherwise leave the tree's sum when it exits).
      const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      cpu.set(Number(entry), (ticks * 1000) / 100);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  let total = 0;
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    total += cpu.get(pid) ?? 0;
    each.set(pid, cpu.get(pid) ?? 0);
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

async function cores(seconds: number): Promise<number> {
  const before = new Map<number, number>();
  const after = new Map<number, number>();
  const c0 = treeCpuMs(dev.pid!, before);
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const total = (treeCpuMs(dev.pid!, after) - c0) / (performance.now() - t0);
  const ms = performance.now() - t0;
  const parts = [...after].map(([pid, c]) => {
    let name = '?';
    try {
      name = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(1, 3).join(' ');
    } catch {
      // gone meanwhile
    }
    return `${pid} ${name}: ${((c - (before.get(pid) ?? 0)) / ms).toFixed(3)}`;
  });
  if (process.env.UNWATCHED_VERBOSE) console.log(parts.join('\n'));
  return total;
}

async function call(method: string, path: string, body?: unknown): Promise<CreatedSession> {
  const res = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as CreatedSession;
}

interface CreatedSession {
  session_id: string;
  livekit_url: string;
  participant_token: string;
}

// The start-up's own work settles first: the media processes warming up, and the embedded
// database's warm-up (a create's statements run a few hundred times after the start, 0.1 to
// 0.2 core for tens of seconds: it was counted as the idle node's until this waited for it).
for (let waited = 0; !banner.includes('database warmed up') && waited < 120_000; waited += 500) {
  await sleep(500);
}
await sleep(5_000);
// 20 s: over 10 s the figure moved between 0.015 and 0.058 from run to run.
const idle = await cores(20);
console.log(`no session: ${idle.toFixed(3)} cores`);
const sessions: CreatedSession[] = [];
for (let i = 0; i < N; i++) {
  sessions.push(
    await call('POST', '/v1/sessions', {
      avatar_id: 'avt_Ada000000000000000000001',
      mode: 'video',
    }),
  );
}
// LiveKit's dynacast turns the video off 10 s after publishing when nobody subscribed.
await sleep(13_000);
const unwatched = await cores(WINDOW_S);
console.log(
  `${N} unwatched sessions: ${unwatched.toFixed(3)} cores, ${((unwatched - idle) / N).toFixed(4)} per session`,
);

// A viewer joins the first session's room: ms from connect() to its first video frame.
const viewer = new Room();
const frames: number[] = [];
viewer.on(RoomEvent.TrackSubscribed, (track: RemoteTrack) => {
  if (track.kind !== TrackKind.KIND_VIDEO) return;
  void (async () => {
    for await (const _ of new VideoStream(track)) frames.push(performance.now());
  })().catch(() => undefined);
});
const connectAt = performance.now();
await viewer.connect(sessions[0]!.livekit_url, sessions[0]!.participant_token, {
  autoSubscribe: true,
  dynacast: false,
});
while (frames.length === 0 && performance.now() - connectAt < 10_000) await sleep(5);
const firstFrameMs = frames[0]! - connectAt;
await sleep(3000);
const fps = frames.filter((t) => t > frames[0]! + 1000 && t <= frames[0]! + 3000).length / 2;
console.log(`viewer: first frame ${Math.round(firstFrameMs)} ms after connect, then ${fps} fps`);

// Issue 47 item 3: what the watched session costs while it does not speak, alone in the node
// (the other sessions are ended first, so that the figure is not a difference of two noisy
// windows; the viewer decodes in this process, outside the tree): listening (the avatar idles at
// full rate, as it does while the user speaks; the user's audio itself is not here), then parked
// (`waiting_state`, the parked frame rate); less the node with no session.
const STATE_WINDOW_S = Number(process.env.BENCH_UNWATCHED_STATE_S ?? 15);
for (const s of sessions.slice(1)) {
  await call('DELETE', `/v1/sessions/${s.session_id}`).catch(() => undefined);
}
await sleep(3000);
const listening = (await cores(STATE_WINDOW_S)) - idle;
console.log(`watched, listening (idle at full rate): ${listening.toFixed(4)} cores`);
await call('POST', `/v1/sessions/${sessions[0]!.session_id}/waiting_state`, { waiting: true });
await sleep(2000);
const parkedFrom = frames.length;
const parked = (await cores(STATE_WINDOW_S)) - idle;
const parkedFps = (frames.length - parkedFrom) / STATE_WINDOW_S;
console.log(`watched, parked: ${parked.toFixed(4)} cores (${parkedFps.toFixed(1)} fps received)`);
await viewer.disconnect();
await call('DELETE', `/v1/sessions/${sessions[0]!.session_id}`).catch(() => undefined);
dev.kill('SIGTERM');
await new Promise((r) => dev.once('exit', r));
rmSync(dataDir, { recursive: true, force: true });

// The floor, in the same run: N rtc-node participants connected to the embedded LiveKit that do
// nothing, with nothing published, with a silent audio track published as the avatar's is, and
// with both of the avatar's tracks published so and never fed a frame
// (bench/support/connectedRooms.ts). An unwatched avatar cannot cost less than the first; the
// last is what its two tracks cost in rtc-node and the server, without any of Visage's code.
const FLOOR_WORDS = {
  none: 'connected, nothing published',
  audio: 'with a silent audio track (DTX), as an avatar',
  tracks: "with an avatar's two tracks, silent and no frame captured",
};
for (const variant of ['none', 'audio', 'tracks'] as const) {
  const floor = JSON.parse(
    execFileSync(
      'node',
      ['--import', 'tsx', 'bench/support/connectedRooms.ts', address, String(N), '20', variant],
      { encoding: 'utf8' },
    )
      .trim()
      .split('\n')
      .at(-1)!,
  ) as { participantCores: number; serverCores: number };
  const each = floor.participantCores + floor.serverCores;
  console.log(
    `floor, ${N} rtc-node participants ${FLOOR_WORDS[variant]}: ${each.toFixed(4)} per participant (participant ${floor.participantCores.toFixed(4)}, LiveKit ${floor.serverCores.toFixed(4)})`,
  );
}
await dispose();
process.exit(0);
