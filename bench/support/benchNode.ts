// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The bench's side of a Visage node (bench/support/visageNode.ts) in its own process: the
 * embedded LiveKit server in a child process, the API, and `processes` media processes
 * (0: media in the node's process), as `visage dev` runs them. Answers its questions over stdin
 * and stdout.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { VisageClient } from '@visage-avatar/client';
import type { FirstAudioMarks, JoinMarks } from './firstAudioLog.js';

export interface CpuSample {
  cpuMs: number;
  livekitCpuMs: number;
  at: number;
  eventLoop: number;
  apiEventLoop: number;
}

export interface BenchNodeOptions {
  /** The benchmark network namespace's address the node's LiveKit server listens on. */
  address: string;
  processes: number;
  /** Extra node flags before the script (e.g. `--cpu-prof`). */
  nodeFlags?: string[];
  /** Added to the node's environment (e.g. `VISAGE_TTS_ENGINE` and a provider's settings). */
  env?: Record<string, string>;
}

export async function startBenchNode(o: BenchNodeOptions) {
  const child = spawn(
    process.execPath,
    [
      ...(o.nodeFlags ?? []),
      '--import',
      'tsx',
      'bench/support/visageNode.ts',
      o.address,
      String(o.processes),
    ],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, NODE_ENV: 'production', ...o.env },
    },
  );
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const nextLine = async () =>
    JSON.parse((await lines.next()).value as string) as Record<string, unknown>;
  const { apiUrl, secret, livekit } = (await nextLine()) as {
    apiUrl: string;
    secret: string;
    livekit: { url: string; apiKey: string; apiSecret: string };
  };
  return {
    processes: o.processes,
    livekit,
    visage: new VisageClient({ apiKey: secret, baseUrl: apiUrl, maxRetries: 0 }),
    cpu: async () => {
      child.stdin!.write('cpu\n');
      return (await nextLine()) as unknown as CpuSample;
    },
    /** The media's log line on an utterance's way to its first audio (speechPlayer.ts). */
    marks: async (utteranceId: string) => {
      child.stdin!.write(`marks ${utteranceId}\n`);
      return (await nextLine()) as unknown as FirstAudioMarks | null;
    },
    /** The avatar's log line on its join (liveKitMediaSession.ts), by room. */
    joinMarks: async (room: string) => {
      child.stdin!.write(`join ${room}\n`);
      return (await nextLine()) as unknown as JoinMarks | null;
    },
    quit: async () => {
      child.stdin!.write('quit\n');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

export type BenchNode = Awaited<ReturnType<typeof startBenchNode>>;
