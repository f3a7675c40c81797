// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import {
  MediaJoinRefusedError,
  MediaUnavailableError,
  type MediaAssets,
  type MediaCore,
  type MediaSession,
  type MediaSessionObserver,
  type MediaSessionSpec,
} from '../mediaCore.js';
// Not the session folder's index: that loads rtc-node, which the API process does not need.
import { DEFAULT_STAGE_TIMEOUT_MS, removeAvatar } from '../room/roomAdmin.js';
import type { AvatarVideoCodec } from '../room/avatarVideoCodec.js';
import { reportStep, type StartupProgress, type StartupStep } from '../startupProgress.js';
import type { TtsOptions } from '../tts/index.js';
import { ChannelClosedError, RemoteError } from './ipcPeer.js';
import { MediaProcessHandle, type MediaProcessExit } from './mediaProcessHandle.js';
import { RemoteMediaSession } from './remoteMediaSession.js';
import type {
  EndedEvent,
  SpeakingEvent,
  StartRequest,
  MediaProcessInit,
  MediaProcessMemory,
  MediaProcessStats,
} from './mediaProcessProtocol.js';

export interface ProcessPoolOptions {
  /** Media processes (one per core is the default of the CLI). */
  processes: number;
  log: Logger;
  /** Where the avatars' atlases are kept between runs; the processes share it. */
  cacheDir?: string;
  agentAbsenceMs?: number;
  stageTimeoutMs?: number;
  /** Told about the start-up (the first process's steps, then the pool's). */
  progress?: StartupProgress;
  /** Bytes a process asks for by id (photo avatars); served from the API process. */
  assets?: MediaAssets;
  /** First delay before a process that died is started again (doubles while starts fail). */
  restartDelayMs?: number;
  /**
   * Sessions a process runs before a fresh process replaces it (it finishes the sessions it has,
   * then exits). rtc-node keeps native memory for every room it has been in (livekit/node-sdks
   * #514, about 0.2 to 0.4 MB a room here), so only a new process gives it back. Default 100;
   * 0 never replaces them.
   */
  maxSessionsPerProcess?: number;
  /** The avatars' video codec (default H.264). */
  videoCodec?: AvatarVideoCodec;
  /** The processes' speech engines' settings (default: espeak alone). */
  tts?: TtsOptions;
  /** Runs the processes from the build (dist/) even from the sources (MediaProcessHandleOptions). */
  fromBuild?: boolean;
}

/** Sessions a process runs before it is replaced, unless told otherwise (see above). */
export const DEFAULT_MAX_SESSIONS_PER_PROCESS = 100;

/** Longest pause between attempts to bring back a process whose starts keep failing. */
const MAX_RESTART_DELAY_MS = 30_000;
/** How long a process may take to close its sessions and exit when the pool closes. */
const SHUTDOWN_MS = 5_000;

/**
 * The media core of a node with several cores: N media processes, each running the real
 * `LiveKitMediaCore` on its own event loop, so that one JavaScript thread no longer caps the
 * machine. A session goes to the process running the fewest; its calls travel over that process's
 * IPC channel in order. A process that dies ends its sessions (`error`, logged) and is started
 * again; the other processes' sessions never notice.
 */
export class ProcessPoolMediaCore implements MediaCore {
  readonly kind = 'livekit';
  private readonly processes: (MediaProcessHandle | undefined)[];
  private readonly sessions = new Map<string, RemoteMediaSession>();
  private closing = false;
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  /** Sessions each process has been given so far. */
  private readonly served = new Map<MediaProcessHandle, number>();
  /** Processes a fresh process has replaced: they finish their sessions, then exit. */
  private readonly retiring = new Set<MediaProcessHandle>();
  /** Slots whose replacement process is starting. */
  private readonly replacing = new Set<number>();
  private readonly maxSessionsPerProcess: number;

  private constructor(private readonly options: ProcessPoolOptions) {
    this.processes = Array.from({ length: options.processes }, () => undefined);
    this.maxSessionsPerProcess = options.maxSessionsPerProcess ?? DEFAULT_MAX_SESSIONS_PER_PROCESS;
  }

  /** Starts every process at once and resolves when all are ready. */
  static async create(o: ProcessPoolOptions): Promise<ProcessPoolMediaCore> {
    if (!Number.isInteger(o.processes) || o.processes < 1) {
      throw new Error(`a process pool needs at least one media process (got ${o.processes})`);
    }
    const pool = new ProcessPoolMediaCore(o);
    // The first process prepares the avatars (drawing and caching them on a first start); the
    // others load their code meanwhile and then take the atlases from the cache.
    let atlasesReady!: () => void;
    const atlases = new Promise<void>((resolve) => (atlasesReady = resolve));
    const first = (step: StartupStep) => {
      if (step.step === 'avatars' && step.phase === 'done') atlasesReady();
      o.progress?.(step);
    };
    const started = await reportStep(
      o.progress,
      'media',
      `starting ${o.processes} media process${o.processes === 1 ? '' : 'es'}`,
      () =>
        Promise.allSettled(
          pool.processes.map((_, i) =>
            i === 0
              ? pool.startProcess(0, { progress: first }).finally(atlasesReady)
              : pool.startProcess(i, { initAfter: atlases }),
          ),
        ),
      () => `${o.processes} process${o.processes === 1 ? '' : 'es'} ready`,
    );
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) {
      await pool.close();
      throw failed.reason;
    }
    o.log.info({ processes: o.processes }, 'media core: livekit in media processes');
    return pool;
  }

  /** Media processes running now (pids), for logs and tests. */
  get pids(): number[] {
    return this.processes.filter((w) => w?.alive).map((w) => w!.pid);
  }

  /** Each running process's load (CPU, event loop since the previous call, sessions). */
  async stats(): Promise<MediaProcessStats[]> {
    const running = this.processes.filter((w) => w?.alive);
    const answers = await Promise.allSettled(
      running.map((w) => w!.peer.request<MediaProcessStats>('stats')),
    );
    return answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
  }

  /** Each running process's memory (see MediaProcessMemory), those finishing their last sessions too. */
  async memory(): Promise<MediaProcessMemory[]> {
    const running = [...this.processes, ...this.retiring].filter((w) => w?.alive);
    const answers = await Promise.allSettled(
      running.map((w) => w!.peer.request<MediaProcessMemory>('memory')),
    );
    return answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
  }

  /** The pid of the process that runs a session. */
  pidOf(sessionId: string): number | undefined {
    return this.sessions.get(sessionId)?.handle.pid;
  }

  async start(spec: MediaSessionSpec, observer: MediaSessionObserver): Promise<MediaSession> {
    const handle = this.leastLoaded();
    if (!handle) throw new MediaUnavailableError('no media process is running');
    const session = new RemoteMediaSession(spec, handle, observer, (s) => {
      if (this.sessions.get(spec.sessionId) === s) this.sessions.delete(spec.sessionId);
      this.exitIfDrained(handle);
    });
    this.sessions.set(spec.sessionId, session);
    this.countSession(handle);
    try {
      await handle.peer.request('start', { spec } satisfies StartRequest);
    } catch (err) {
      this.sessions.delete(spec.sessionId);
      this.exitIfDrained(handle);
      // Died while starting: the avatar may have joined already, and cannot leave by itself.
      if (err instanceof ChannelClosedError) this.removeAvatarOf(session, handle);
      throw startError(err, handle.index);
    }
    return session;
  }

  running(): ReadonlyMap<string, MediaSession> {
    return new Map(this.sessions);
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const timer of this.restartTimers) clearTimeout(timer);
    await Promise.all([...this.processes, ...this.retiring].map((w) => w?.shutdown(SHUTDOWN_MS)));
  }

  /** Counts a session given to `handle`; at the limit, a fresh process is started to replace it. */
  private countSession(handle: MediaProcessHandle): void {
    const served = (this.served.get(handle) ?? 0) + 1;
    this.served.set(handle, served);
    const limit = this.maxSessionsPerProcess;
    if (limit === 0 || served < limit || this.replacing.has(handle.index) || this.closing) return;
    this.replacing.add(handle.index);
    this.options.log.info(
      { media_process: handle.index, media_process_pid: handle.pid, sessions_served: served },
      'media process served its share of sessions; starting a fresh process to replace it',
    );
    // Until the replacement is ready the old process keeps taking sessions.
    this.startProcess(handle.index)
      .catch((err: unknown) =>
        this.options.log.error(
          { err, media_process: handle.index },
          'replacing a media process failed',
        ),
      )
      .finally(() => this.replacing.delete(handle.index));
  }

  /** A replaced process exits once its last session is closed. */
  private exitIfDrained(handle: MediaProcessHandle): void {
    if (!this.retiring.has(handle)) return;
    for (const s of this.sessions.values()) if (s.handle === handle) return;
    void handle.shutdown(SHUTDOWN_MS);
  }

  private leastLoaded(): MediaProcessHandle | undefined {
    const load = new Map<MediaProcessHandle, number>();
    for (const w of this.processes) if (w?.alive) load.set(w, 0);
    for (const s of this.sessions.values()) {
      if (load.has(s.handle)) load.set(s.handle, load.get(s.handle)! + 1);
    }
    let best: MediaProcessHandle | undefined;
    for (const [w, n] of load) if (best === undefined || n < load.get(best)!) best = w;
    return best;
  }

  private async startProcess(
    index: number,
    how: { progress?: StartupProgress; initAfter?: Promise<unknown> } = {},
  ): Promise<void> {
    const init: MediaProcessInit = {
      index,
      cacheDir: this.options.cacheDir,
      agentAbsenceMs: this.options.agentAbsenceMs,
      stageTimeoutMs: this.options.stageTimeoutMs,
      logLevel: this.options.log.level as MediaProcessInit['logLevel'],
      reportProgress: how.progress !== undefined,
      videoCodec: this.options.videoCodec,
      tts: this.options.tts,
    };
    const handle = await MediaProcessHandle.start({
      init,
      log: this.options.log,
      assets: this.options.assets,
      progress: how.progress,
      initAfter: how.initAfter,
      fromBuild: this.options.fromBuild,
    });
    if (this.closing) {
      await handle.shutdown(SHUTDOWN_MS);
      return;
    }
    handle.peer.on('speaking', ({ sessionId, speaking }: SpeakingEvent) =>
      this.sessionOn(handle, sessionId)?.speakingChanged(speaking),
    );
    handle.peer.on('ended', ({ sessionId, reason, detail }: EndedEvent) =>
      this.sessionOn(handle, sessionId)?.ended(reason, detail),
    );
    const replaced = this.processes[index];
    this.processes[index] = handle;
    void handle.exited.then((exit) => this.processExited(handle, exit));
    if (replaced?.alive) {
      this.retiring.add(replaced);
      this.options.log.info(
        { media_process: index, media_process_pid: handle.pid, replaced_pid: replaced.pid },
        'fresh media process ready; the one it replaces exits after its last session',
      );
      this.exitIfDrained(replaced);
    }
  }

  private sessionOn(handle: MediaProcessHandle, sessionId: string) {
    const session = this.sessions.get(sessionId);
    return session?.handle === handle ? session : undefined;
  }

  private processExited(handle: MediaProcessHandle, exit: MediaProcessExit): void {
    if (this.processes[handle.index] === handle) this.processes[handle.index] = undefined;
    this.served.delete(handle);
    const retired = this.retiring.delete(handle);
    if (this.closing) return;
    const lost = [...this.sessions.values()].filter((s) => s.handle === handle);
    const how = exit.signal ?? `code ${exit.code}`;
    if (retired && lost.length === 0) {
      this.options.log.info(
        { media_process: handle.index, media_process_pid: handle.pid },
        'replaced media process exited',
      );
      return;
    }
    this.options.log.error(
      {
        media_process: handle.index,
        media_process_pid: handle.pid,
        exit: how,
        sessions: lost.map((s) => s.sessionId),
      },
      retired
        ? 'replaced media process exited before its last session; those sessions end (error)'
        : 'media process exited; its sessions end (error) and it is started again',
    );
    for (const s of lost) {
      this.sessions.delete(s.sessionId);
      s.ended('error', `its media process exited (${how})`);
      this.removeAvatarOf(s, handle);
    }
    // A replaced process's slot already has its successor.
    if (!retired) this.scheduleRestart(handle.index, this.options.restartDelayMs ?? 1_000);
  }

  /**
   * A dead process's avatars are still in their rooms, frozen, until the LiveKit server notices the
   * lost connection: the API process takes them out (in the background, logged).
   */
  private removeAvatarOf(session: RemoteMediaSession, handle: MediaProcessHandle): void {
    const context = {
      session_id: session.sessionId,
      room: session.spec.roomName,
      media_process: handle.index,
    };
    removeAvatar(session.spec, this.options.stageTimeoutMs ?? DEFAULT_STAGE_TIMEOUT_MS).then(
      (done) =>
        this.options.log.info(
          { ...context, removal: done },
          done === 'no_credentials'
            ? "a dead media process's avatar stays until the LiveKit server drops it (only a token for that LiveKit)"
            : "a dead media process's avatar was taken out of its room",
        ),
      (err: unknown) =>
        this.options.log.warn(
          { ...context, err },
          "could not take a dead media process's avatar out of its room; the LiveKit server drops it later",
        ),
    );
  }

  private scheduleRestart(index: number, delayMs: number): void {
    const timer = setTimeout(() => {
      this.restartTimers.delete(timer);
      if (this.closing) return;
      this.startProcess(index).then(
        () => this.options.log.info({ media_process: index }, 'media process started again'),
        (err: unknown) => {
          this.options.log.error(
            { err, media_process: index },
            'media process failed to start again',
          );
          this.scheduleRestart(index, Math.min(delayMs * 2, MAX_RESTART_DELAY_MS));
        },
      );
    }, delayMs);
    this.restartTimers.add(timer);
  }
}

/** A failed start as the session manager expects it: the media errors by their class. */
function startError(err: unknown, index: number): Error {
  if (err instanceof RemoteError) {
    if (err.remote.name === 'MediaJoinRefusedError') return new MediaJoinRefusedError(err.message);
    if (err.remote.name === 'MediaUnavailableError') return new MediaUnavailableError(err.message);
    return new Error(err.message);
  }
  if (err instanceof ChannelClosedError) {
    return new MediaUnavailableError(`media process ${index} exited while starting the session`);
  }
  return err instanceof Error ? err : new Error(String(err));
}
