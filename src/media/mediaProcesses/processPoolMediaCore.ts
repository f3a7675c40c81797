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
import { DEFAULT_STAGE_TIMEOUT_MS, removeAvatar, type AvatarVideoCodec } from '../session/index.js';
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
  /** Media worker processes (one per core is the default of the CLI). */
  workers: number;
  log: Logger;
  /** Where the avatars' atlases are kept between runs; the workers share it. */
  cacheDir?: string;
  agentAbsenceMs?: number;
  stageTimeoutMs?: number;
  /** Told about the start-up (the first worker's steps, then the pool's). */
  progress?: StartupProgress;
  /** Bytes a worker asks for by id (photo avatars); served from the API process. */
  assets?: MediaAssets;
  /** First delay before a worker that died is started again (doubles while starts fail). */
  restartDelayMs?: number;
  /**
   * Sessions a worker runs before a fresh process replaces it (it finishes the sessions it has,
   * then exits). rtc-node keeps native memory for every room it has been in (livekit/node-sdks
   * #514, about 0.2 to 0.4 MB a room here), so only a new process gives it back. Default 100;
   * 0 never replaces them.
   */
  maxSessionsPerWorker?: number;
  /** The avatars' video codec (default H.264). */
  videoCodec?: AvatarVideoCodec;
  /** The workers' speech engines' settings (default: espeak alone). */
  tts?: TtsOptions;
}

/** Sessions a worker runs before it is replaced, unless told otherwise (see above). */
export const DEFAULT_MAX_SESSIONS_PER_WORKER = 100;

/** Longest pause between attempts to bring back a worker whose starts keep failing. */
const MAX_RESTART_DELAY_MS = 30_000;
/** How long a worker may take to close its sessions and exit when the pool closes. */
const SHUTDOWN_MS = 5_000;

/**
 * The media core of a node with several cores: N media processes (media workers), each running the real
 * `LiveKitMediaCore` on its own event loop, so that one JavaScript thread no longer caps the
 * machine. A session goes to the worker running the fewest; its calls travel over that worker's
 * IPC channel in order. A worker that dies ends its sessions (`error`, logged) and is started
 * again; the other workers' sessions never notice.
 */
export class ProcessPoolMediaCore implements MediaCore {
  readonly kind = 'livekit';
  private readonly workers: (MediaProcessHandle | undefined)[];
  private readonly sessions = new Map<string, RemoteMediaSession>();
  private closing = false;
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  /** Sessions each worker has been given so far. */
  private readonly served = new Map<MediaProcessHandle, number>();
  /** Workers a fresh process has replaced: they finish their sessions, then exit. */
  private readonly retiring = new Set<MediaProcessHandle>();
  /** Slots whose replacement process is starting. */
  private readonly replacing = new Set<number>();
  private readonly maxSessionsPerWorker: number;

  private constructor(private readonly options: ProcessPoolOptions) {
    this.workers = Array.from({ length: options.workers }, () => undefined);
    this.maxSessionsPerWorker = options.maxSessionsPerWorker ?? DEFAULT_MAX_SESSIONS_PER_WORKER;
  }

  /** Starts every worker at once and resolves when all are ready. */
  static async create(o: ProcessPoolOptions): Promise<ProcessPoolMediaCore> {
    if (!Number.isInteger(o.workers) || o.workers < 1) {
      throw new Error(`a process pool needs at least one media process (got ${o.workers})`);
    }
    const pool = new ProcessPoolMediaCore(o);
    // The first worker prepares the avatars (drawing and caching them on a first start); the
    // others load their code meanwhile and then take the atlases from the cache.
    let atlasesReady!: () => void;
    const atlases = new Promise<void>((resolve) => (atlasesReady = resolve));
    const first = (step: StartupStep) => {
      if (step.step === 'avatars' && step.phase === 'done') atlasesReady();
      o.progress?.(step);
    };
    const started = await reportStep(
      o.progress,
      'workers',
      `starting ${o.workers} media worker process${o.workers === 1 ? '' : 'es'}`,
      () =>
        Promise.allSettled(
          pool.workers.map((_, i) =>
            i === 0
              ? pool.startWorker(0, { progress: first }).finally(atlasesReady)
              : pool.startWorker(i, { initAfter: atlases }),
          ),
        ),
      () => `${o.workers} ready`,
    );
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) {
      await pool.close();
      throw failed.reason;
    }
    o.log.info({ workers: o.workers }, 'media core: livekit in worker processes');
    return pool;
  }

  /** Worker processes running now (pids), for logs and tests. */
  get pids(): number[] {
    return this.workers.filter((w) => w?.alive).map((w) => w!.pid);
  }

  /** Each running worker's load (CPU, event loop since the previous call, sessions). */
  async stats(): Promise<MediaProcessStats[]> {
    const running = this.workers.filter((w) => w?.alive);
    const answers = await Promise.allSettled(
      running.map((w) => w!.peer.request<MediaProcessStats>('stats')),
    );
    return answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
  }

  /** Each running worker's memory (see MediaProcessMemory), those finishing their last sessions too. */
  async memory(): Promise<MediaProcessMemory[]> {
    const running = [...this.workers, ...this.retiring].filter((w) => w?.alive);
    const answers = await Promise.allSettled(
      running.map((w) => w!.peer.request<MediaProcessMemory>('memory')),
    );
    return answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
  }

  /** The pid of the worker that runs a session. */
  workerPidOf(sessionId: string): number | undefined {
    return this.sessions.get(sessionId)?.worker.pid;
  }

  async start(spec: MediaSessionSpec, observer: MediaSessionObserver): Promise<MediaSession> {
    const worker = this.leastLoaded();
    if (!worker) throw new MediaUnavailableError('no media worker is running');
    const session = new RemoteMediaSession(spec, worker, observer, (s) => {
      if (this.sessions.get(spec.sessionId) === s) this.sessions.delete(spec.sessionId);
      this.exitIfDrained(worker);
    });
    this.sessions.set(spec.sessionId, session);
    this.countSession(worker);
    try {
      await worker.peer.request('start', { spec } satisfies StartRequest);
    } catch (err) {
      this.sessions.delete(spec.sessionId);
      this.exitIfDrained(worker);
      // Died while starting: the avatar may have joined already, and cannot leave by itself.
      if (err instanceof ChannelClosedError) this.removeAvatarOf(session, worker);
      throw startError(err, worker.index);
    }
    return session;
  }

  running(): ReadonlyMap<string, MediaSession> {
    return new Map(this.sessions);
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const timer of this.restartTimers) clearTimeout(timer);
    await Promise.all([...this.workers, ...this.retiring].map((w) => w?.shutdown(SHUTDOWN_MS)));
  }

  /** Counts a session given to `worker`; at the limit, a fresh process is started to replace it. */
  private countSession(worker: MediaProcessHandle): void {
    const served = (this.served.get(worker) ?? 0) + 1;
    this.served.set(worker, served);
    const limit = this.maxSessionsPerWorker;
    if (limit === 0 || served < limit || this.replacing.has(worker.index) || this.closing) return;
    this.replacing.add(worker.index);
    this.options.log.info(
      { worker: worker.index, worker_pid: worker.pid, sessions_served: served },
      'media worker served its share of sessions; starting a fresh process to replace it',
    );
    // Until the replacement is ready the old process keeps taking sessions.
    this.startWorker(worker.index)
      .catch((err: unknown) =>
        this.options.log.error({ err, worker: worker.index }, 'replacing a media worker failed'),
      )
      .finally(() => this.replacing.delete(worker.index));
  }

  /** A replaced worker exits once its last session is closed. */
  private exitIfDrained(worker: MediaProcessHandle): void {
    if (!this.retiring.has(worker)) return;
    for (const s of this.sessions.values()) if (s.worker === worker) return;
    void worker.shutdown(SHUTDOWN_MS);
  }

  private leastLoaded(): MediaProcessHandle | undefined {
    const load = new Map<MediaProcessHandle, number>();
    for (const w of this.workers) if (w?.alive) load.set(w, 0);
    for (const s of this.sessions.values()) {
      if (load.has(s.worker)) load.set(s.worker, load.get(s.worker)! + 1);
    }
    let best: MediaProcessHandle | undefined;
    for (const [w, n] of load) if (best === undefined || n < load.get(best)!) best = w;
    return best;
  }

  private async startWorker(
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
    const worker = await MediaProcessHandle.start({
      init,
      log: this.options.log,
      assets: this.options.assets,
      progress: how.progress,
      initAfter: how.initAfter,
    });
    if (this.closing) {
      await worker.shutdown(SHUTDOWN_MS);
      return;
    }
    worker.peer.on('speaking', ({ sessionId, speaking }: SpeakingEvent) =>
      this.sessionOn(worker, sessionId)?.speakingChanged(speaking),
    );
    worker.peer.on('ended', ({ sessionId, reason, detail }: EndedEvent) =>
      this.sessionOn(worker, sessionId)?.ended(reason, detail),
    );
    const replaced = this.workers[index];
    this.workers[index] = worker;
    void worker.exited.then((exit) => this.workerExited(worker, exit));
    if (replaced?.alive) {
      this.retiring.add(replaced);
      this.options.log.info(
        { worker: index, worker_pid: worker.pid, replaced_pid: replaced.pid },
        'fresh media worker ready; the one it replaces exits after its last session',
      );
      this.exitIfDrained(replaced);
    }
  }

  private sessionOn(worker: MediaProcessHandle, sessionId: string) {
    const session = this.sessions.get(sessionId);
    return session?.worker === worker ? session : undefined;
  }

  private workerExited(worker: MediaProcessHandle, exit: MediaProcessExit): void {
    if (this.workers[worker.index] === worker) this.workers[worker.index] = undefined;
    this.served.delete(worker);
    const retired = this.retiring.delete(worker);
    if (this.closing) return;
    const lost = [...this.sessions.values()].filter((s) => s.worker === worker);
    const how = exit.signal ?? `code ${exit.code}`;
    if (retired && lost.length === 0) {
      this.options.log.info(
        { worker: worker.index, worker_pid: worker.pid },
        'replaced media worker exited',
      );
      return;
    }
    this.options.log.error(
      {
        worker: worker.index,
        worker_pid: worker.pid,
        exit: how,
        sessions: lost.map((s) => s.sessionId),
      },
      retired
        ? 'replaced media worker exited before its last session; those sessions end (error)'
        : 'media worker exited; its sessions end (error) and it is started again',
    );
    for (const s of lost) {
      this.sessions.delete(s.sessionId);
      s.ended('error', `its media worker process exited (${how})`);
      this.removeAvatarOf(s, worker);
    }
    // A replaced worker's slot already has its successor.
    if (!retired) this.scheduleRestart(worker.index, this.options.restartDelayMs ?? 1_000);
  }

  /**
   * A dead worker's avatars are still in their rooms, frozen, until the LiveKit server notices the
   * lost connection: the API process takes them out (in the background, logged).
   */
  private removeAvatarOf(session: RemoteMediaSession, worker: MediaProcessHandle): void {
    const context = {
      session_id: session.sessionId,
      room: session.spec.roomName,
      worker: worker.index,
    };
    removeAvatar(session.spec, this.options.stageTimeoutMs ?? DEFAULT_STAGE_TIMEOUT_MS).then(
      (done) =>
        this.options.log.info(
          { ...context, removal: done },
          done === 'no_credentials'
            ? "a dead worker's avatar stays until the LiveKit server drops it (only a token for that LiveKit)"
            : "a dead worker's avatar was taken out of its room",
        ),
      (err: unknown) =>
        this.options.log.warn(
          { ...context, err },
          "could not take a dead worker's avatar out of its room; the LiveKit server drops it later",
        ),
    );
  }

  private scheduleRestart(index: number, delayMs: number): void {
    const timer = setTimeout(() => {
      this.restartTimers.delete(timer);
      if (this.closing) return;
      this.startWorker(index).then(
        () => this.options.log.info({ worker: index }, 'media worker started again'),
        (err: unknown) => {
          this.options.log.error({ err, worker: index }, 'media worker failed to start again');
          this.scheduleRestart(index, Math.min(delayMs * 2, MAX_RESTART_DELAY_MS));
        },
      );
    }, delayMs);
    this.restartTimers.add(timer);
  }
}

/** A failed start as the session manager expects it: the media errors by their class. */
function startError(err: unknown, worker: number): Error {
  if (err instanceof RemoteError) {
    if (err.remote.name === 'MediaJoinRefusedError') return new MediaJoinRefusedError(err.message);
    if (err.remote.name === 'MediaUnavailableError') return new MediaUnavailableError(err.message);
    return new Error(err.message);
  }
  if (err instanceof ChannelClosedError) {
    return new MediaUnavailableError(`media worker ${worker} exited while starting the session`);
  }
  return err instanceof Error ? err : new Error(String(err));
}
