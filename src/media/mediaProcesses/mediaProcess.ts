// SPDX-License-Identifier: GPL-3.0-or-later
import { dispose } from '@livekit/rtc-node';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import type { MediaSession } from '../mediaCore.js';
import { LiveKitMediaCore } from '../room/index.js';
import { TtsEngines } from '../tts/index.js';
import { IpcPeer, type IpcChannel } from './ipcPeer.js';
import {
  remoteAssets,
  type AudioEvent,
  type SessionRef,
  type SpeakEvent,
  type StartRequest,
  type WaitingEvent,
  type MediaProcessInit,
  type MediaProcessMemory,
  type MediaProcessReady,
  type MediaProcessStats,
} from './mediaProcessProtocol.js';

/** How long a process whose API process vanished gives its avatars to leave their rooms. */
const ORPHAN_CLOSE_MS = 3_000;

/**
 * The media process: one real `LiveKitMediaCore` on its own event loop, driven by the
 * API process over the IPC channel (see mediaProcessProtocol.ts). It ignores the terminal's Ctrl-C
 * (the API process ends the sessions first, then asks it to shut down) and exits when the API
 * process goes away, after its avatars have left their rooms.
 */
export function runMediaProcess(): void {
  if (!process.send) throw new Error('the media process runs as a child process with IPC');
  const peer = new IpcPeer(process as unknown as IpcChannel);
  const sessions = new Map<string, MediaSession>();
  let core: LiveKitMediaCore | undefined;

  const coreOrThrow = () => {
    if (!core) throw new Error('the media process has not been initialised');
    return core;
  };
  // A session's media may still be starting when it is closed: the core lists it from the start.
  const find = (id: string) => sessions.get(id) ?? core?.running().get(id);

  peer.handle('init', async (init: MediaProcessInit): Promise<MediaProcessReady> => {
    const started = performance.now();
    const log = pino(
      { level: init.logLevel, base: null, timestamp: false },
      { write: (line: string) => peer.emit('log', line) },
    );
    core = await LiveKitMediaCore.create({
      log,
      agentAbsenceMs: init.agentAbsenceMs,
      stageTimeoutMs: init.stageTimeoutMs,
      cacheDir: init.cacheDir,
      progress: init.reportProgress ? (step) => peer.emit('progress', step) : undefined,
      // Photo avatars' builds live in the API process's file storage.
      assets: remoteAssets(peer),
      videoCodec: init.videoCodec,
      tts: new TtsEngines(init.tts),
    });
    return { pid: process.pid, readyMs: performance.now() - started };
  });

  peer.handle('start', async ({ spec }: StartRequest) => {
    const session = await coreOrThrow().start(spec, {
      speakingChanged: (speaking) => peer.emit('speaking', { sessionId: spec.sessionId, speaking }),
      ended: (reason, detail) => peer.emit('ended', { sessionId: spec.sessionId, reason, detail }),
    });
    sessions.set(spec.sessionId, session);
    return null;
  });
  peer.on('speak', ({ sessionId, item }: SpeakEvent) => sessions.get(sessionId)?.speak(item));
  peer.on('audio', ({ sessionId, item }: AudioEvent) => sessions.get(sessionId)?.playAudio(item));
  peer.on('waiting', ({ sessionId, waiting }: WaitingEvent) =>
    sessions.get(sessionId)?.setWaiting(waiting),
  );
  peer.handle('interrupt', async ({ sessionId }: SessionRef) => {
    const session = sessions.get(sessionId);
    return session ? session.interrupt() : { interrupted: false, droppedUtterances: 0 };
  });
  let eventLoopMark = performance.eventLoopUtilization();
  peer.handle('stats', (): MediaProcessStats => {
    const usage = process.cpuUsage();
    const eventLoop = performance.eventLoopUtilization(eventLoopMark).utilization;
    eventLoopMark = performance.eventLoopUtilization();
    return {
      pid: process.pid,
      sessions: sessions.size,
      cpuMs: (usage.user + usage.system) / 1000,
      eventLoop,
    };
  });
  peer.handle('memory', (): MediaProcessMemory => {
    // Only when the process runs with --expose-gc (the churn bench): what is really retained.
    (globalThis as { gc?: () => void }).gc?.();
    const m = process.memoryUsage();
    return { pid: process.pid, rss: m.rss, heapUsed: m.heapUsed };
  });
  peer.handle('close', async ({ sessionId }: SessionRef) => {
    const session = find(sessionId);
    sessions.delete(sessionId);
    await session?.close();
    return null;
  });

  const closeAll = async () => {
    const all = [...new Set([...sessions.values(), ...(core?.running().values() ?? [])])];
    sessions.clear();
    await Promise.allSettled(all.map((s) => s.close()));
    await core?.close().catch(() => undefined);
    await dispose().catch(() => undefined);
  };
  peer.handle('shutdown', async () => {
    await closeAll();
    // Answer first, then leave.
    setImmediate(() => process.exit(0));
    return null;
  });
  process.on('disconnect', () => {
    // The API process is gone (killed): nobody will drive these avatars again.
    peer.close('the API process went away');
    setTimeout(() => process.exit(1), ORPHAN_CLOSE_MS).unref();
    void closeAll().finally(() => process.exit(1));
  });
  process.on('SIGINT', () => undefined);
}
