// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The node of the burst bench (bench/burst.bench.ts), in its own process as `visage dev` runs:
 * the embedded database, the embedded LiveKit server in its own process on the namespace
 * address (argv[2]), the real media core in one media process. Creates argv[3] keys with a cap
 * of argv[4] and prints one JSON line (the API's URL and the keys' secrets). Then, on stdin:
 * `start` begins a burst's record and `report` prints it as one JSON line (NodeRecord); `quit`
 * stops it.
 *
 * The record is what the node itself saw: each request's time inside the node, from its own
 * request log lines (the `ms` of each, from the moment the listener had the request to its
 * answer), and how late its event loop ran (perf_hooks' event-loop delay). Beside the latencies
 * the caller measures, they say how much of a latency is the node's and how much is the machine's
 * and the client's (the floor).
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { pino } from 'pino';
import { benchNodeConfig, startBenchLivekit } from './benchLivekit.js';
import { keyAdmin } from '../../src/server/admin/keyAdmin.js';
import { startVisage } from '../../src/server/runtime.js';

/** What the node saw of one burst. */
export interface NodeRecord {
  /** Milliseconds inside the node of each request, by its answer's status (`/healthz` apart). */
  byStatus: Record<string, number[]>;
  health: number[];
  /** How late the event loop ran during the burst, in milliseconds. */
  loopDelay: { p50: number; p99: number; max: number };
  /**
   * The event loop's thread over the burst (Linux' schedstat, absent elsewhere): milliseconds
   * it ran, and milliseconds it was ready to run but waited for a core (the machine's other
   * processes: the media process, the LiveKit server, the bench's client).
   */
  loopThread?: { ranMs: number; waitedMs: number };
}

/** The event loop thread's run and run-queue wait so far, in nanoseconds (Linux only). */
function loopThreadTimes(): [number, number] | undefined {
  try {
    const [ran, waited] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8')
      .split(' ')
      .map(Number);
    return [ran!, waited!];
  } catch {
    return undefined;
  }
}

const address = process.argv[2]!;
const keyCount = Number(process.argv[3]);
const cap = Number(process.argv[4]);

let record: NodeRecord = { byStatus: {}, health: [], loopDelay: { p50: 0, p99: 0, max: 0 } };
// The request lines are kept (info); warnings and worse go to stderr: stdout answers the bench.
const log = pino(
  { level: 'info' },
  {
    write(line: string) {
      const entry = JSON.parse(line) as {
        level: number;
        msg?: string;
        path?: string;
        status?: number;
        ms?: number;
      };
      if (entry.msg === 'request' && entry.ms !== undefined) {
        if (entry.path === '/healthz') record.health.push(entry.ms);
        else (record.byStatus[String(entry.status)] ??= []).push(entry.ms);
      } else if (entry.level >= 40) process.stderr.write(line);
    },
  },
);
const lk = await startBenchLivekit(address);
const livekit = lk.process;
const server = await startVisage(
  { ...benchNodeConfig(lk, 'visage-burst-'), mediaProcesses: 1 },
  { log },
);
// The node listens while its media process starts; the burst is measured against a started one.
await server.media;
const secrets: string[] = [];
for (let i = 0; i < keyCount; i++) {
  secrets.push((await keyAdmin.create(server.store, `burst-${i}`, cap)).secret);
}
process.stdout.write(`${JSON.stringify({ apiUrl: server.url, secrets })}\n`);
const delay = monitorEventLoopDelay({ resolution: 5 });
let threadAtStart: [number, number] | undefined;
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'start') {
    record = { byStatus: {}, health: [], loopDelay: { p50: 0, p99: 0, max: 0 } };
    delay.reset();
    delay.enable();
    threadAtStart = loopThreadTimes();
  } else if (line === 'report') {
    delay.disable();
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    record.loopDelay = {
      p50: ms(delay.percentile(50)),
      p99: ms(delay.percentile(99)),
      max: ms(delay.max),
    };
    const now = loopThreadTimes();
    if (threadAtStart && now) {
      record.loopThread = {
        ranMs: Math.round((now[0] - threadAtStart[0]) / 1e6),
        waitedMs: Math.round((now[1] - threadAtStart[1]) / 1e6),
      };
    }
    process.stdout.write(`${JSON.stringify(record)}\n`);
  } else if (line === 'quit') break;
}
await server.close();
await livekit.close();
process.exit(0);
