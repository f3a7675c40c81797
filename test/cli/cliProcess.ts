// SPDX-License-Identifier: GPL-3.0-or-later
// The `visage` CLI as a child process: from source (test/cli/cliEntry.ts, through tsx), or exactly
// as a user runs it (`npx visage` runs bin/visage.js, which runs the tsup build in dist/).
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach } from 'vitest';
import { BUILT_CLI } from './builtCli.js';

export { buildCli } from './builtCli.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcess;
  done: Promise<CliResult>;
  /** Resolves with everything printed so far once `pattern` appears; fails if the CLI exits. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  output(): string;
}

export interface CliStart {
  env?: Record<string, string | undefined>;
  /** Its own process group, so a test can send Ctrl-C the way a terminal does: to the group. */
  ownGroup?: boolean;
  /** bin/visage.js (the build) instead of the source. */
  built?: boolean;
  /** Not killed after each test: a process that several tests share, which the file ends. */
  shared?: boolean;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

export function startCli(args: string[], o: CliStart = {}): CliProcess {
  const entry = o.built ? BUILT_CLI : ['--import', 'tsx', 'test/cli/cliEntry.ts'];
  const child = spawn(process.execPath, [...entry, ...args], {
    env: { ...process.env, VISAGE_LOG_LEVEL: 'warn', ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: o.ownGroup ?? false,
  });
  if (!o.shared) children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve) =>
    child.once('exit', (code) => resolve({ code, stdout, stderr })),
  );
  const waitFor = async (pattern: RegExp, timeoutMs = 120_000) => {
    const until = Date.now() + timeoutMs;
    while (!pattern.test(stdout)) {
      if (Date.now() > until || child.exitCode !== null) {
        throw new Error(`CLI did not print ${pattern}: stdout=${stdout} stderr=${stderr}`);
      }
      await sleep(50);
    }
    return stdout;
  };
  return { child, done, waitFor, output: () => stdout };
}

export const runCli = (args: string[], env?: Record<string, string | undefined>) =>
  startCli(args, { env }).done;
