// SPDX-License-Identifier: GPL-3.0-or-later
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import type { MediaAssets } from '../mediaCore.js';
import type { StartupProgress } from '../startupProgress.js';
import { childExecArgv, childScript } from '../../threads/childScript.js';
import { IpcPeer, type IpcChannel } from './ipcPeer.js';
import { logMediaProcessOutput } from './mediaProcessOutput.js';
import {
  serveAssets,
  type LogEvent,
  type ProgressEvent,
  type MediaProcessInit,
  type MediaProcessReady,
} from './mediaProcessProtocol.js';

/**
 * The `--cpu-prof` flags of this process's command line, for a process: a CPU profile asked of the
 * API process (`BENCH_PROFILE`) covers its processes too, which do most of the media's work. All
 * but a fixed file name (`--cpu-prof-name`), which every process would overwrite.
 */
export function cpuProfileFlags(execArgv: readonly string[]): string[] {
  const flags: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i]!;
    if (!flag.startsWith('--cpu-prof')) continue;
    // `--cpu-prof-dir DIR` as two arguments: the value goes with its flag.
    const value = /^--cpu-prof-(dir|name|interval)$/.test(flag) ? execArgv[++i] : undefined;
    if (flag.startsWith('--cpu-prof-name')) continue;
    flags.push(flag, ...(value === undefined ? [] : [value]));
  }
  return flags;
}

export interface MediaProcessHandleOptions {
  init: MediaProcessInit;
  log: Logger;
  assets?: MediaAssets;
  /** Told about the process's start-up steps when `init.reportProgress` is set. */
  progress?: StartupProgress;
  /**
   * The process starts (loads its code) at once, but is initialised (atlases, TTS) only once
   * this settles: on a first start the other processes wait until the first has drawn and cached
   * the atlases, then load them instead of drawing them again.
   */
  initAfter?: Promise<unknown>;
  /**
   * Runs the process from the build (dist/) even when this code runs from its TypeScript
   * sources (tests, which build dist/ once per run): through tsx a start first transpiles the
   * whole media graph (childScript.ts).
   */
  fromBuild?: boolean;
}

export interface MediaProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * One media process seen from the API process: its IPC peer, and its exit. The process's
 * log records go to the API process's logger (tagged `media_process`), so there is one log stream.
 */
export class MediaProcessHandle {
  readonly peer: IpcPeer;
  readonly exited: Promise<MediaProcessExit>;
  readonly index: number;

  private constructor(
    private readonly child: ChildProcess,
    o: MediaProcessHandleOptions,
  ) {
    this.index = o.init.index;
    this.peer = new IpcPeer(child as unknown as IpcChannel);
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.peer.close(`media process ${o.init.index} exited`);
        resolve({ code, signal });
      }),
    );
    const log = o.log.child({ media_process: o.init.index });
    this.peer.on('log', (line: LogEvent) => forwardLog(log, line));
    this.peer.on('progress', (step: ProgressEvent) => o.progress?.(step));
    serveAssets(this.peer, o.assets);
    // Logs come over IPC; what the process prints (native code, Node itself) becomes log records
    // too. Never raw onto our stdout, which may be a protocol channel (the bench's).
    if (child.stdout) logMediaProcessOutput(child.stdout, log, 'stdout');
    if (child.stderr) logMediaProcessOutput(child.stderr, log, 'stderr');
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the process and waits until its media core is ready (atlases, TTS warm-up). */
  static async start(o: MediaProcessHandleOptions): Promise<MediaProcessHandle> {
    const entry = childScript(
      import.meta.url,
      './mediaProcessMain.ts',
      'mediaProcess',
      o.fromBuild ? 'build' : 'caller',
    );
    const profile = cpuProfileFlags(process.execArgv);
    const child = spawn(process.execPath, [...profile, ...childExecArgv(entry), entry.path], {
      // Its own process group: a terminal's Ctrl-C reaches the API process only, which ends the
      // sessions before it stops the processes. The IPC channel tells the process if we die.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'advanced',
      // rtc-node's native threads each get a glibc malloc arena that never shrinks back: two
      // keep the process's resident memory flat under session churn (bench/results/
      // 2026-11-25-churn-memory.md). An operator's own value wins; 0 means glibc's default.
      env: { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' },
    });
    const handle = new MediaProcessHandle(child, o);
    try {
      await Promise.race([
        Promise.resolve(o.initAfter)
          .catch(() => undefined)
          .then(() => handle.peer.request<MediaProcessReady>('init', o.init)),
        handle.exited.then(({ code, signal }) => {
          throw new Error(
            `media process ${o.init.index} exited (${signal ?? code}) while starting`,
          );
        }),
      ]);
    } catch (err) {
      handle.kill();
      throw err;
    }
    return handle;
  }

  kill(): void {
    if (this.alive) this.child.kill('SIGKILL');
  }

  /** Asks the process to close what it runs and exit; kills it past `timeoutMs`. */
  async shutdown(timeoutMs: number): Promise<void> {
    if (!this.alive) return;
    const timer = setTimeout(() => this.kill(), timeoutMs);
    await this.peer.request('shutdown').catch(() => undefined);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Writes one of the process's pino lines through the API process's logger, at its level. */
function forwardLog(log: Logger, line: string): void {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    log.warn({ line }, 'unparsable log line from a media process');
    return;
  }
  const { level, msg, ...fields } = record;
  const name = log.levels.labels[Number(level)] ?? 'info';
  (log[name as 'info'] as (obj: object, msg?: string) => void).call(log, fields, msg as string);
}
