// SPDX-License-Identifier: GPL-3.0-or-later
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { AVATAR_CATALOGUE } from '../media/avatarCatalogue.js';
import type { MediaAssets, MediaCore } from '../media/mediaCore.js';
import { reportStep, type StartupProgress } from '../media/startupProgress.js';
import { TtsEngines } from '../media/tts/index.js';
import { adminSocketPath, startAdminSocket } from './admin/adminSocket.js';
import { Cluster } from './cluster/cluster.js';
import { createApp, type AppDeps, type MountedPages } from './http/app.js';
import { CreateLull } from './http/createLull.js';
import { frontDoor } from './http/frontDoor.js';
import { readinessCheck } from './http/readiness.js';
import { AvatarBuilder } from './assets/avatarBuilder.js';
import type { ServerConfig } from './config.js';
import { acquireDataDirLock } from './admin/dataDirLock.js';
import { AtlasDelivery } from './assets/atlasDelivery.js';
import { ATLAS_SECRET_NAME, AtlasSigner } from './assets/atlasSignature.js';
import { fileStorageFor, type FileStorage } from './assets/fileStorage.js';
import { answerParserErrors } from './http/parserErrors.js';
import { createLogger } from './logger.js';
import { startMediaCore } from './startMediaCore.js';
import { StartingMediaCore } from '../media/startingMediaCore.js';
import { SessionManager } from './sessions/sessionManager.js';
import { preloadSpeechModel } from './assets/speechModelPreload.js';
import { StockPreviews } from './assets/stockPreviews.js';
import { Store } from './store/store.js';
import { UrlFetcher } from './assets/urlFetcher.js';
import { voiceMaker } from './assets/voiceAnalysis.js';
import { CATALOGUE_EPOCH } from './http/wireObjects.js';

export interface VisageServer {
  /** Base URL of the HTTP API, e.g. http://127.0.0.1:8080. */
  url: string;
  port: number;
  store: Store;
  /** Stored bytes (clips, voices, photo avatars): on disk or in the shared database. */
  files: FileStorage;
  sessions: SessionManager;
  log: Logger;
  /**
   * Resolves once the media core has started (the node listens before: a session created
   * sooner waits for it); rejects if it cannot start.
   */
  media: Promise<void>;
  /** Resolves, with the reason, if the media core fails to start; the node should then stop. */
  failed: Promise<Error>;
  /** Ends live sessions (`shutdown`), stops listening and closes the database. */
  close(): Promise<void>;
}

export interface StartOptions {
  log?: Logger;
  /**
   * The media core, or one still starting (it then starts while the database opens); default:
   * avatars in LiveKit rooms, in `config.mediaProcesses` media processes (or in this process),
   * their atlases cached in `<dataDir>/cache` and photo avatars' builds read from this server's
   * file storage.
   */
  media?: MediaCore | Promise<MediaCore>;
  /** Told about each start-up step (database, avatars, TTS) as it starts and ends. */
  progress?: StartupProgress;
  /** TTS engines (new voices use the default); default: made from `config.media.tts`. */
  tts?: TtsEngines;
  /**
   * Prepare voice making (the voice-activity model and espeak-ng in this process) once the node
   * has started and no create has come for `backgroundLullMs`, so that the first voice made
   * then does not wait seconds for them; default false (tests make few voices). It is no part of
   * the start-up: it is not needed to serve, and its CPU would slow the media processes' start
   * and a first burst of creates on a small machine.
   */
  preloadSpeechModel?: boolean;
  /**
   * Compress the stock avatars' atlases for browsers once the node has started and no create has
   * come for `backgroundLullMs` (those not compressed before); default false (tests that fetch
   * one get it compressed at their fetch).
   */
  prepareStockAtlases?: boolean;
  /**
   * Warm the embedded database up for a create's statements from the moment the node listens, in
   * rolled-back transactions that run only while no request waits (warmUp.ts), so that a first
   * burst of creates does not wait for PGlite's functions to be recompiled; default false
   * (tests start many nodes and burst few).
   */
  warmDatabase?: boolean;
  /**
   * Those two wait, after the start, until no session create has come for this long, ms
   * (default BACKGROUND_LULL_MS).
   */
  backgroundLullMs?: number;
  /** Pages served beside the API (`visage dev` mounts its playground); default none. */
  pages?: readonly MountedPages[];
}

/**
 * How long the node's work for itself after its start (preloadSpeechModel, prepareStockAtlases)
 * waits for no session create to come: longer than the gaps inside a burst, short beside a start.
 */
export const BACKGROUND_LULL_MS = 10_000;

/** Where a node keeps what it can rebuild (avatar atlases): safe to delete. */
export const cacheDirOf = (dataDir: string) => join(dataDir, 'cache');

/**
 * Starts one Visage node: database, session manager, HTTP API and admin socket. Sessions that a
 * crashed process left live on this node are ended first, so no slot leaks across restarts.
 */
export async function startVisage(config: ServerConfig, options: StartOptions = {}) {
  const log = options.log ?? createLogger();
  // The embedded database is single-process: its owner locks the data directory. A shared
  // PostgreSQL server needs no lock, and key commands go to it directly (no admin socket).
  const shared = Boolean(config.databaseUrl);
  const lock = shared
    ? { update: () => undefined, release: () => undefined }
    : acquireDataDirLock(config.dataDir, { pid: process.pid, role: 'server' });
  let store: Store | undefined;
  let cluster: Cluster | undefined;
  const tts = options.tts ?? new TtsEngines(config.media?.tts);
  // Photo avatars' builds come from the file storage, open once the database is.
  let files: FileStorage | undefined;
  const assets: MediaAssets = {
    get: (id) => (files ? files.get(id) : Promise.reject(new Error('file storage not open'))),
  };
  // A media core the caller gives (or one starting) is ready before the node listens. The
  // node's own starts once it listens, and sessions wait for it (StartingMediaCore): its
  // processes' CPU (code, atlases, TTS: seconds on a small machine) would otherwise slow the
  // database and the LiveKit server the node needs first.
  const given = options.media && Promise.resolve(options.media);
  let own: StartingMediaCore | undefined;
  // The node's own media core starts once the node listens: its processes' start would take the
  // CPU the last steps before listening need. A start that fails before then starts none.
  let listened!: () => void;
  let gaveUp!: (err: Error) => void;
  const listening = new Promise<void>((resolve, reject) => {
    listened = resolve;
    gaveUp = reject;
  });
  listening.catch(() => undefined); // the media core that waited for it says so, if any
  try {
    const storeOpening = openDatabase(config, log, options.progress);
    // Whichever fails, the others are awaited and released below.
    const [opened, givenMedia, livekit] = await Promise.all([
      storeOpening,
      given?.catch(async (err: unknown) => {
        await storeOpening.then((s) => s.close()).catch(() => undefined);
        throw err;
      }),
      Promise.resolve(config.livekit).catch(async (err: unknown) => {
        await storeOpening.then((s) => s.close()).catch(() => undefined);
        throw err;
      }),
    ]);
    own = givenMedia
      ? undefined
      : new StartingMediaCore(
          'livekit',
          listening.then(() =>
            startMediaCore({
              processes: config.mediaProcesses ?? 0,
              log,
              tts,
              agentAbsenceMs: config.limits.agentAbsenceMs,
              cacheDir: cacheDirOf(config.dataDir),
              progress: options.progress,
              assets,
              settings: config.media,
            }),
          ),
        );
    const media: MediaCore = givenMedia ?? own!;
    store = opened;
    files = fileStorageFor(store, config.dataDir);
    await store.seedStockAvatars(
      AVATAR_CATALOGUE.map((a) => ({
        id: a.avatarId,
        name: a.name,
        description: a.description,
        defaultVoiceId: a.defaultVoice.voiceId,
        design: a.design,
      })),
      new Date(CATALOGUE_EPOCH),
    );
    // On a shared PostgreSQL server this node joins the others (after a crash, its previous
    // instance must first fall silent).
    const openStore = store;
    cluster = store.cluster
      ? await reportStep(options.progress, 'cluster', 'joining the other nodes', () =>
          Cluster.join({
            store: openStore,
            nodeId: config.nodeId,
            capacity: config.maxSessions,
            log,
            timing: config.cluster,
            // Placed on last while its media processes start (own.ready() rejects if they cannot).
            mediaStarted: own ? own.ready() : media.whenStarted?.(),
          }),
        )
      : undefined;
    // Sessions a previous run of this node left live can never be driven again.
    const orphans = await store.endLiveSessionsOnNode(
      config.nodeId,
      cluster ? 'error' : 'shutdown',
    );
    if (orphans.length > 0) {
      log.warn(
        { count: orphans.length, sessions: orphans },
        'ended the sessions a previous run of this node left live',
      );
    }
    const sessions = new SessionManager({
      store,
      media,
      limits: config.limits,
      livekit,
      nodeId: config.nodeId,
      maxSessions: config.maxSessions,
      allowPrivateUrls: config.allowPrivateUrls,
      log,
      cluster,
    });
    cluster?.serve(sessions);
    const urlFetcher = new UrlFetcher({
      allowPrivate: config.allowPrivateUrls,
      timeoutMs: config.limits.urlFetchTimeoutMs,
      maxBytes: config.limits.fileBytes,
    });
    if (config.allowPrivateUrls)
      log.warn('VISAGE_ALLOW_PRIVATE_URLS=1: voice and LiveKit URLs may be private');
    const atlasDelivery = new AtlasDelivery({
      dir: join(cacheDirOf(config.dataDir), 'atlas-web'),
      renderCacheDir: cacheDirOf(config.dataDir),
      files,
      log,
    });
    const appDeps: AppDeps = {
      store,
      sessions,
      files,
      urlFetcher,
      analyzeVoice: voiceMaker(tts),
      avatarBuilder: new AvatarBuilder(config.limits),
      stockPreviews: new StockPreviews(),
      atlasSigner: new AtlasSigner({ secret: () => opened.serverSecret(ATLAS_SECRET_NAME) }),
      atlasDelivery,
      ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
      limits: config.limits,
      version: config.version,
      mediaKind: media.kind,
      readiness: readinessCheck({
        draining: () => closing !== undefined,
        media: () => own?.state ?? 'ready',
        ping: () => opened.ping(),
        onDatabaseError: (err) => log.warn({ err: String(err) }, 'readiness: the database failed'),
      }),
      log,
      pages: options.pages,
    };
    const lull = new CreateLull();
    const http = createServer(frontDoor(createApp(appDeps), appDeps, lull));
    answerParserErrors(http, log);
    await listen(http, config.port, config.host);
    listened();
    // The embedded database warmed up for a create's statements while the media processes
    // start, until the first create comes (the creates warm it then) or the node closes.
    let stopping = false;
    if (options.warmDatabase && openStore.kind === 'embedded') {
      void openStore
        .warmUp({ nodeId: config.nodeId, stop: () => stopping || lull.creates > 0 })
        .then(
          ({ rounds, ms }) => log.info({ rounds, ms: Math.round(ms) }, 'database warmed up'),
          (err: unknown) => {
            if (!stopping) log.warn({ err }, 'the database warm-up failed');
          },
        );
    }
    const admin = shared
      ? undefined
      : await startAdminSocket(store, config.dataDir, {
          sessionsEnded: (ids) => sessions.stopEnded(ids, 'key_revoked'),
        });
    sessions.startReconciliation();
    if (admin) lock.update({ adminSocket: adminSocketPath(config.dataDir) });
    // The node's work for itself after its start waits for the media processes' start (it would
    // take their CPU) and then for a lull in creates: a retry storm comes as soon as a node
    // answers again, and this work on the same cores made it wait (createLull.ts).
    const afterStart = (own?.ready() ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => {
        lull.start();
        return lull.after(options.backgroundLullMs ?? BACKGROUND_LULL_MS);
      });
    // On its own thread; it never fails (see speechModelPreload), and a close does not wait for it.
    if (options.preloadSpeechModel) {
      void afterStart.then(() => preloadSpeechModel(log, undefined, tts));
    }
    // The stock avatars' atlases for browsers (the media processes' start drew them into the
    // render cache): in a child process at the lowest priority, one at a time.
    if (options.prepareStockAtlases) {
      void afterStart
        .then(() => openStore.listStockAvatars())
        .then((stock) => Promise.all(stock.map((avatar) => atlasDelivery.prepare(avatar))))
        .catch((err: unknown) => log.warn({ err }, 'stock atlases not compressed'));
    }
    const mediaReady = own?.ready().then(() => undefined) ?? Promise.resolve();
    mediaReady.catch(() => undefined); // told through `failed`
    // A node whose media cannot start serves no session: it says so, and its runner stops it.
    const failed = new Promise<Error>((resolve) => {
      own?.ready().catch((err: unknown) => {
        const error = err instanceof Error ? err : new Error(String(err));
        if (closing === undefined) log.error({ err: error }, 'the media core failed to start');
        // The other nodes of a cluster take the new sessions.
        void cluster?.drain();
        resolve(error);
      });
    });
    const port = (http.address() as AddressInfo).port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const joined = cluster;
    let closing: Promise<void> | undefined;
    const server: VisageServer = {
      url: `http://${host}:${port}`,
      port,
      store: openStore,
      files,
      sessions,
      log,
      media: mediaReady,
      failed,
      close: () =>
        (closing ??= (async () => {
          // Drain: no new sessions here; this node's own end (`shutdown`); the others go on.
          stopping = true;
          await joined?.drain();
          atlasDelivery.close();
          await sessions.shutdown();
          await joined?.leave();
          await media.close();
          http.closeAllConnections();
          await Promise.all([closeServer(http), admin && closeServer(admin)]);
          await urlFetcher.close();
          await openStore.close();
          lock.release();
          log.info('stopped');
        })()),
    };
    return server;
  } catch (err) {
    gaveUp(new Error('the node did not start'));
    await cluster?.leave().catch(() => undefined);
    await store?.close().catch(() => undefined);
    // A media core the caller gave stays the caller's to close.
    await own?.close().catch(() => undefined);
    lock.release();
    throw err;
  }
}

function openDatabase(
  config: ServerConfig,
  log: Logger,
  progress: StartupProgress | undefined,
): Promise<Store> {
  const open = () =>
    Store.open({
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      log,
      template: config.databaseTemplate,
    });
  if (config.databaseUrl) {
    return reportStep(progress, 'database', 'connecting to PostgreSQL', open, () => 'connected');
  }
  const fresh = !existsSync(join(config.dataDir, 'db'));
  const template = config.databaseTemplate
    ? existsSync(join(config.databaseTemplate, 'PG_VERSION'))
    : false;
  const created = template ? 'created from the template' : 'created';
  return reportStep(
    progress,
    'database',
    fresh ? 'creating the database (first start only)' : 'opening the database',
    open,
    () => (fresh ? created : 'opened'),
  );
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
