// SPDX-License-Identifier: GPL-3.0-or-later
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface LivekitProcessOptions {
  port: number;
  host?: string;
  keys: Record<string, string>;
  nodeIp?: string;
  /**
   * How to run the `visage` CLI: default, this process's own entry (`bin/visage.js`, or the
   * source entry under tsx), so the child is the same build as its parent.
   */
  command?: string[];
  /** Where the child's other output (its log lines) goes. Default: this process's stdout. */
  output?: { write(text: string): unknown };
  /** The child's pino level (default $VISAGE_LOG_LEVEL, else info): the same as its parent's. */
  logLevel?: string;
}

/** A process's memory as `process.memoryUsage()` gives it (bytes). */
export interface ProcessMemory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

export interface LivekitProcess {
  url: string;
  pid: number;
  /** The child's resident set and V8 heap (after a full collection when it exposes gc). */
  memory(): Promise<ProcessMemory>;
  close(): Promise<void>;
}

/**
 * Runs the embedded LiveKit-compatible server (`visage livekit`) in a child process. Its SFU does
 * SRTP and forwarding in JavaScript: in the API's process it would take most of the event loop
 * that the avatars' media needs (measured with `npm run bench`).
 */
export async function startLivekitProcess(o: LivekitProcessOptions): Promise<LivekitProcess> {
  const command = o.command ?? [...process.execArgv, process.argv[1]!];
  const args = [...command, 'livekit', '--port', String(o.port)];
  for (const [key, secret] of Object.entries(o.keys)) args.push('--keys', `${key}:${secret}`);
  if (o.host) args.push('--host', o.host);
  if (o.nodeIp) args.push('--node-ip', o.nodeIp);
  args.push('--log-level', o.logLevel ?? process.env.VISAGE_LOG_LEVEL ?? 'info');
  // Its own process group: a terminal's Ctrl-C reaches only the parent, which ends its sessions
  // (`shutdown`) before it stops this server. The IPC channel makes the child exit if the parent
  // dies without stopping it.
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    detached: true,
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const found = /LiveKit-compatible server at (ws:\/\/\S+)/.exec(line);
      if (found) resolve(found[1]!);
      else (o.output ?? process.stdout).write(`${line}\n`);
    });
    void exited.then((code) =>
      reject(new Error(`visage livekit exited (${code}) before listening`)),
    );
  });
  return {
    url,
    pid: child.pid!,
    memory: () =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          child.off('message', onMessage);
          reject(new Error('visage livekit did not report its memory'));
        }, 10_000);
        const onMessage = ({ type, ...memory }: { type?: string } & ProcessMemory) => {
          if (type !== 'memory') return;
          clearTimeout(timer);
          child.off('message', onMessage);
          resolve(memory);
        };
        child.on('message', onMessage);
        child.send({ type: 'memory' });
      }),
    close: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
