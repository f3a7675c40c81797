// SPDX-License-Identifier: GPL-3.0-or-later
// The agent-worker example (examples/agent-worker/agent.ts) as a real worker process, for tests:
// `dev` mode, registered with a test LiveKit server, in its own process group so that its job
// processes end with it.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { until } from './agentHarness.js';

const WORKER = fileURLToPath(new URL('../../examples/agent-worker/agent.ts', import.meta.url));

export interface AgentWorkerProcess {
  readonly process: ChildProcess;
  /** The last lines it printed (for failure messages). */
  output(): string;
  /** Resolves once it registered with the LiveKit server. */
  registered(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export function startAgentWorker(
  env: Record<string, string>,
  args: string[] = [],
): AgentWorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, 'dev', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(chunk.toString());
    if (lines.length > 400) lines.shift();
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const output = () => lines.join('');
  return {
    process: child,
    output,
    registered: (timeoutMs = 90_000) =>
      until(() => output().includes('registered worker'), timeoutMs, 'the worker to register'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 8_000);
      await exited;
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // nothing left in its group
      }
    },
  };
}
