// SPDX-License-Identifier: GPL-3.0-or-later
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLivekitProcess, type LivekitProcess } from '../../src/cli/livekitProcess.js';
import { DEFAULT_LIMITS, type ServerConfig } from '../../src/server/config.js';

/** The embedded LiveKit server of a bench, with the keys its nodes and viewers use. */
export interface BenchLivekit {
  process: LivekitProcess;
  url: string;
  apiKey: string;
  apiSecret: string;
}

/**
 * Starts the embedded LiveKit server in its own process, as `visage dev` does, on the namespace
 * address, with a fresh secret; its lines go to stderr (a bench node's stdout answers the bench).
 */
export async function startBenchLivekit(address: string): Promise<BenchLivekit> {
  const apiSecret = `bench-${Math.random().toString(36).slice(2)}`;
  const process = await startLivekitProcess({
    port: 0,
    host: address,
    nodeIp: address,
    keys: { devkey: apiSecret },
    command: ['--import', 'tsx', 'test/cli/cliEntry.ts'],
    logLevel: 'warn',
    output: globalThis.process.stderr,
  });
  return { process, url: process.url, apiKey: 'devkey', apiSecret };
}

/**
 * A bench node's configuration, as `visage dev` runs one, on a fresh data directory and this
 * LiveKit: a loopback port of its own, 64 sessions at most, and the per-key request rate raised
 * so that the rate limit does not answer a bench's bursts itself.
 */
export function benchNodeConfig(lk: BenchLivekit, dataDirPrefix: string): ServerConfig {
  return {
    host: '127.0.0.1',
    port: 0,
    dataDir: mkdtempSync(join(tmpdir(), dataDirPrefix)),
    nodeId: 'bench',
    maxSessions: 64,
    allowPrivateUrls: false,
    limits: { ...DEFAULT_LIMITS, requestsPerSecond: 1000, requestBurst: 1000 },
    livekit: { url: lk.url, apiKey: lk.apiKey, apiSecret: lk.apiSecret },
    version: 'bench',
  };
}
