import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { Logger } from 'pino';
import type { MediaCore } from '../media/mediaCore.js';
import { LiveKitMediaCore } from '../media/session/index.js';
import { adminSocketPath, startAdminSocket } from './adminSocket.js';
import { createApp } from './app.js';
import type { ServerConfig } from './config.js';
import { acquireDataDirLock } from './dataDirLock.js';
import { FileStorage } from './fileStorage.js';
import { createLogger } from './logger.js';
import { SessionManager } from './sessionManager.js';
import { Store } from './store/store.js';
import { UrlFetcher } from './urlFetcher.js';
import { analyzeVoiceClip } from './voiceAnalysis.js';

export interface VisageServer {
  /** Base URL of the HTTP API, e.g. http://127.0.0.1:8080. */
  url: string;
  port: number;
  store: Store;
  sessions: SessionManager;
  log: Logger;
  /** Ends live sessions (`shutdown`), stops listening and closes the database. */
  close(): Promise<void>;
}

export interface StartOptions {
  log?: Logger;
  /** The media core; default: avatars in LiveKit rooms (`LiveKitMediaCore`). */
  media?: MediaCore;
}

/**
 * Starts one Visage node: database, session manager, HTTP API and admin socket. Sessions that a
 * crashed process left live on this node are ended first, so no slot leaks across restarts.
 */
export async function startVisage(config: ServerConfig, options: StartOptions = {}) {
  const log = options.log ?? createLogger();
  const lock = acquireDataDirLock(config.dataDir, { pid: process.pid, role: 'server' });
  let store: Store | undefined;
  try {
    store = await Store.openEmbedded(config.dataDir);
    const orphans = await store.endLiveSessionsOnNode(config.nodeId, 'shutdown');
    if (orphans > 0) log.warn({ count: orphans }, 'ended sessions left live by a previous run');
    const media =
      options.media ??
      (await LiveKitMediaCore.create({ log, agentAbsenceMs: config.limits.agentAbsenceMs }));
    const sessions = new SessionManager({
      store,
      media,
      limits: config.limits,
      livekit: config.livekit,
      nodeId: config.nodeId,
      maxSessions: config.maxSessions,
      log,
    });
    const urlFetcher = new UrlFetcher({
      allowPrivate: config.allowPrivateUrls,
      timeoutMs: config.limits.urlFetchTimeoutMs,
      maxBytes: config.limits.fileBytes,
    });
    if (config.allowPrivateUrls) log.warn('VISAGE_ALLOW_PRIVATE_URLS=1: voice URLs may be private');
    const app = createApp({
      store,
      sessions,
      files: new FileStorage(config.dataDir),
      urlFetcher,
      analyzeVoice: analyzeVoiceClip,
      limits: config.limits,
      version: config.version,
      mediaKind: media.kind,
      log,
    });
    const http = createServer(getRequestListener(app.fetch));
    await listen(http, config.port, config.host);
    const admin = await startAdminSocket(store, config.dataDir);
    lock.update({ adminSocket: adminSocketPath(config.dataDir) });
    const port = (http.address() as AddressInfo).port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const openStore = store;
    let closing: Promise<void> | undefined;
    const server: VisageServer = {
      url: `http://${host}:${port}`,
      port,
      store: openStore,
      sessions,
      log,
      close: () =>
        (closing ??= (async () => {
          await sessions.shutdown();
          await media.close();
          http.closeAllConnections();
          await Promise.all([closeServer(http), closeServer(admin)]);
          await urlFetcher.close();
          await openStore.close();
          lock.release();
          log.info('stopped');
        })()),
    };
    return server;
  } catch (err) {
    await store?.close().catch(() => undefined);
    lock.release();
    throw err;
  }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
