// SPDX-License-Identifier: GPL-3.0-or-later
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Agent } from 'undici';
import { startLivekitProcess, type LivekitProcess } from '../../src/cli/livekitProcess.js';
import { BUILT_CLI, buildCli } from '../cli/builtCli.js';

/** The CLI from source, through tsx (each process transpiles and loads it: a few CPU-seconds). */
const SOURCE_CLI = ['--import', 'tsx', 'test/cli/cliEntry.ts'];

/**
 * A `visage serve` node in its own process (the CLI from source, or the build), as in production:
 * its API on a loopback port, its media in `processes` media processes, its log lines (JSON)
 * collected.
 */
export interface ServedNode {
  nodeId: string;
  url: string;
  child: ChildProcess;
  /** Every JSON log line it wrote. */
  logs: Record<string, unknown>[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  call(
    method: string,
    path: string,
    init?: {
      json?: unknown;
      auth?: string;
      /** The connections to send it on (a burst's own, fresh ones); the process's by default. */
      dispatcher?: Agent;
    },
  ): Promise<Response>;
}

export interface ServedNodeOptions {
  nodeId: string;
  databaseUrl: string;
  livekit: { url: string; apiKey: string; apiSecret: string };
  maxSessions: number;
  processes: number;
  env?: Record<string, string>;
  /**
   * Where its log lines go, tagged with the node (a test passes its log file, testLogStream());
   * none by default: this helper runs outside vitest too (bench/cluster.bench.ts).
   */
  logStream?: { write(line: string): unknown };
  /**
   * The build (bin/visage.js, built once per run by buildCli) instead of the source through tsx,
   * as a user runs it: the node and its media processes then start without transpiling.
   */
  built?: boolean;
}

export async function startServedNode(o: ServedNodeOptions): Promise<ServedNode> {
  if (o.built) await buildCli();
  const child = spawn(
    process.execPath,
    [
      ...(o.built ? BUILT_CLI : SOURCE_CLI),
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--media-processes',
      String(o.processes),
      '--data-dir',
      mkdtempSync(join(tmpdir(), `visage-${o.nodeId}-`)),
    ],
    {
      env: {
        ...process.env,
        DATABASE_URL: o.databaseUrl,
        LIVEKIT_URL: o.livekit.url,
        LIVEKIT_API_KEY: o.livekit.apiKey,
        LIVEKIT_API_SECRET: o.livekit.apiSecret,
        VISAGE_NODE_ID: o.nodeId,
        VISAGE_MAX_SESSIONS: String(o.maxSessions),
        // The tests send hundreds of requests at once with one key.
        VISAGE_RATE_PER_SECOND: '1000',
        VISAGE_RATE_BURST: '1000',
        VISAGE_LOG_LEVEL: 'info',
        ...o.env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const logs: Record<string, unknown>[] = [];
  // Into `logStream` (a test's log file, .tmp/logs/), tagged with the node, and kept here for
  // assertions.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const serving = /serving (http:\/\/\S+)/.exec(line);
      if (serving) resolve(serving[1]!);
      else if (line.startsWith('{')) {
        const entry = { node: o.nodeId, ...(JSON.parse(line) as Record<string, unknown>) };
        logs.push(entry);
        o.logStream?.write(`${JSON.stringify(entry)}\n`);
      }
    });
    void exited.then(({ code, signal }) =>
      reject(new Error(`node ${o.nodeId} exited (${signal ?? code}) before serving`)),
    );
  });
  return {
    nodeId: o.nodeId,
    url,
    child,
    logs,
    exited,
    call: async (method, path, init = {}) => {
      const send = () =>
        fetch(url + path, {
          method,
          headers: {
            ...(init.auth ? { authorization: `Bearer ${init.auth}` } : {}),
            ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          body: init.json === undefined ? undefined : JSON.stringify(init.json),
          ...(init.dispatcher ? { dispatcher: init.dispatcher } : {}),
        } as RequestInit);
      try {
        return await send();
      } catch (err) {
        if (method === 'GET' && closedIdleSocket(err)) return send();
        // fetch says only "fetch failed": what failed is in its cause.
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        throw new Error(
          `${method} ${path} to ${o.nodeId}: ${String(err)} (${cause?.code ?? ''} ${cause?.message ?? ''})`,
          { cause: err },
        );
      }
    },
  };
}

/**
 * A kept-alive connection the node closed as idle just as the next request went out on it
 * ("other side closed": the keep-alive race, seen once after 300 parallel creates on a loaded
 * machine). The request was not served; a GET is sent again, as HTTP clients do.
 */
function closedIdleSocket(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } }).cause;
  return err instanceof TypeError && cause?.code === 'UND_ERR_SOCKET';
}

/**
 * The cluster's LiveKit: the embedded server in a child process (the CLI from source, or the
 * build: `built` as for startServedNode) on the test network's address, with one API key and a
 * random secret, as the nodes share it.
 */
export async function startClusterLivekit(
  address: string,
  o: { built?: boolean } = {},
): Promise<{ livekit: LivekitProcess; key: { apiKey: string; apiSecret: string } }> {
  if (o.built) await buildCli();
  const key = { apiKey: 'devkey', apiSecret: `cluster-${Math.random().toString(36).slice(2)}` };
  const livekit = await startLivekitProcess({
    port: 0,
    host: address,
    nodeIp: address,
    keys: { [key.apiKey]: key.apiSecret },
    command: o.built ? BUILT_CLI : SOURCE_CLI,
    output: process.stderr,
    // Its own warning (signalling open on the namespace address) and info lines stay out of the
    // test summary.
    logLevel: 'error',
  });
  return { livekit, key };
}
