/**
 * The node of the burst bench (bench/burst.bench.ts), in its own process as `visage dev` runs:
 * the embedded database, the embedded LiveKit server in its own process on the namespace
 * address (argv[2]), the real media core in one worker process. Creates argv[3] keys with a cap
 * of argv[4] and prints one JSON line (the API's URL and the keys' secrets); stops on "quit".
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { destination, pino } from 'pino';
import { startBenchLivekit } from './benchLivekit.js';
import { DEFAULT_LIMITS } from '../../src/server/config.js';
import { keyAdmin } from '../../src/server/admin/keyAdmin.js';
import { startVisage } from '../../src/server/runtime.js';

const address = process.argv[2]!;
const keyCount = Number(process.argv[3]);
const cap = Number(process.argv[4]);
// Warnings and worse, to stderr: stdout is the answer channel to the bench.
const log = pino({ level: 'warn' }, destination(2));
const lk = await startBenchLivekit(address);
const livekit = lk.process;
const server = await startVisage(
  {
    host: '127.0.0.1',
    port: 0,
    dataDir: mkdtempSync(join(tmpdir(), 'visage-burst-')),
    nodeId: 'bench',
    maxSessions: 64,
    allowPrivateUrls: false,
    // The default rate limit (per key) would answer part of the burst itself.
    limits: { ...DEFAULT_LIMITS, requestsPerSecond: 1000, requestBurst: 1000 },
    livekit: { url: lk.url, apiKey: lk.apiKey, apiSecret: lk.apiSecret },
    version: 'bench',
    mediaWorkers: 1,
  },
  { log },
);
const secrets: string[] = [];
for (let i = 0; i < keyCount; i++) {
  secrets.push((await keyAdmin.create(server.store, `burst-${i}`, cap)).secret);
}
process.stdout.write(`${JSON.stringify({ apiUrl: server.url, secrets })}\n`);
for await (const line of createInterface({ input: process.stdin })) if (line === 'quit') break;
await server.close();
await livekit.close();
process.exit(0);
