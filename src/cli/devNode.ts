// SPDX-License-Identifier: GPL-3.0-or-later
import { DEFAULT_LIMITS } from '../server/config.js';
import { reportStep } from '../media/startupProgress.js';
import { keyAdmin } from '../server/admin/keyAdmin.js';
import { createLogger } from '../server/logger.js';
import { startVisage, type VisageServer } from '../server/runtime.js';
import { VERSION } from '../version.js';
import { startLivekitProcess } from './livekitProcess.js';
import { limitsFrom, nodeSettingsFrom, type Environment } from './environment.js';
import { mediaSettingsFrom } from './mediaSettings.js';
import { playgroundPages } from './playground/playgroundPages.js';
import { releaseNativeRuntime } from './releaseNative.js';
import { untilStopped } from './runUntilSignal.js';
import { installedDatabaseTemplate } from './databaseTemplateDir.js';
import { startupReport } from './startupReport.js';
import { StartupLogGate } from './startupLogGate.js';
import { UsageError } from './usage.js';

/** What `visage dev` runs, from its flags (see DEV_USAGE). */
export interface DevNodeOptions {
  host: string;
  port: number;
  dataDir: string;
  maxSessions: number;
  mediaProcesses: number;
  livekit: {
    port: number;
    host: string;
    nodeIp: string | undefined;
    apiKey: string;
    apiSecret: string;
  };
  /** The rest of the settings (VISAGE_DEV_KEY: a key to register instead of creating one). */
  env: Environment;
  /**
   * JSON log lines as they come, during the start-up too (default: held until the media
   * processes are up).
   */
  verbose?: boolean;
}

/**
 * One Visage node on embedded defaults, until a signal: the embedded LiveKit server in a child
 * process, and the node itself made by `startVisage` exactly as `visage serve` makes it (the
 * media core, its photo avatars' file storage and its speech engines are wired there, in one
 * place). The LiveKit child starts while the database opens and the avatars get ready.
 */
export async function runDevNode(o: DevNodeOptions, out: (line: string) => void) {
  const media = mediaSettingsFrom(o.env);
  const node = nodeSettingsFrom(o.env);
  const logs = new StartupLogGate(process.stdout, !o.verbose);
  const log = createLogger({ level: o.env.VISAGE_LOG_LEVEL, destination: logs });
  const report = startupReport(out);
  out(`Visage ${VERSION} (dev): starting, data in ${o.dataDir}`);
  // Its SFU runs in a child process: it would otherwise take most of the event loop the
  // avatars' media needs.
  const livekit = reportStep(
    report.progress,
    'livekit',
    'starting the embedded LiveKit server',
    () =>
      startLivekitProcess({
        port: o.livekit.port,
        host: o.livekit.host,
        keys: { [o.livekit.apiKey]: o.livekit.apiSecret },
        nodeIp: o.livekit.nodeIp,
        output: logs,
      }),
    (p) => `listening at ${p.url}`,
  );
  let server: VisageServer;
  try {
    server = await startVisage(
      {
        host: o.host,
        port: o.port,
        dataDir: o.dataDir,
        databaseUrl: o.env.DATABASE_URL,
        databaseTemplate: installedDatabaseTemplate(),
        nodeId: node.nodeId,
        maxSessions: o.maxSessions,
        mediaProcesses: o.mediaProcesses,
        allowPrivateUrls: node.allowPrivateUrls,
        ...(node.publicUrl ? { publicUrl: node.publicUrl } : {}),
        limits: limitsFrom(o.env),
        media,
        livekit: livekit.then((p) => ({
          url: p.url,
          apiKey: o.livekit.apiKey,
          apiSecret: o.livekit.apiSecret,
        })),
        version: VERSION,
      },
      {
        log,
        progress: report.progress,
        preloadSpeechModel: true,
        prepareStockAtlases: true,
        warmDatabase: true,
        // The developer's page to see and talk to their agent; dev only (playgroundPages.ts).
        pages: [
          playgroundPages({
            livekit: livekit.then((p) => ({
              url: p.url,
              apiKey: o.livekit.apiKey,
              apiSecret: o.livekit.apiSecret,
            })),
          }),
        ],
      },
    );
  } catch (err) {
    logs.open({ all: true });
    await livekit.then((p) => p.close()).catch(() => undefined);
    throw err;
  }
  const { url: livekitUrl, close: closeLivekit } = await livekit;
  let key: DevKey;
  try {
    key = await ensureDevKey(server, o.env.VISAGE_DEV_KEY);
  } catch (err) {
    logs.open({ all: true });
    await server.close();
    await closeLivekit();
    throw err;
  }
  report.ready(`Visage ${VERSION} (dev)`);
  for (const line of banner({ api: server.url, livekitUrl, key, o })) out(line);
  // The media processes start behind the banner: their start-up's lines stay held until they are
  // up (the progress lines say so), and all of them are written if they cannot start.
  void server.media.then(
    () => logs.open(),
    () => logs.open({ all: true }),
  );
  const stopped = await untilStopped(server.failed);
  if (stopped instanceof Error) {
    process.stderr.write(`visage: the media processes could not start: ${stopped.message}\n`);
    await server.close();
    await closeLivekit();
    await releaseNativeRuntime();
    return 1;
  }
  server.log.info({ signal: stopped }, 'shutting down');
  await server.close(); // closes the media core too
  await closeLivekit();
  await releaseNativeRuntime();
  return 0;
}

/**
 * The lines a developer needs, once the node is ready: where the API, the playground and the
 * LiveKit server are, the key, and the LiveKit credentials as lines to paste into the shell that
 * runs an agent (the same as `--print-livekit-credentials` prints).
 */
function banner(b: { api: string; livekitUrl: string; key: DevKey; o: DevNodeOptions }) {
  return [
    `  API:         ${b.api}  (OpenAPI: ${b.api}/v1/openapi.json)`,
    `  Playground:  ${b.api}/playground`,
    `  LiveKit:     ${b.livekitUrl}`,
    `  Data:        ${b.o.dataDir}`,
    `  ${b.key.line}`,
    '',
    'For an agent, in its shell:',
    `  export LIVEKIT_URL=${b.livekitUrl}`,
    `  export LIVEKIT_API_KEY=${b.o.livekit.apiKey}`,
    `  export LIVEKIT_API_SECRET=${b.o.livekit.apiSecret}`,
    `  export VISAGE_API_URL=${b.api}`,
    ...(b.key.exported ? [`  export VISAGE_API_KEY=${b.key.exported}`] : []),
    '',
    'Press Ctrl-C to stop.',
  ];
}

/** The banner's line about the key, and what `VISAGE_API_KEY` is exported as (when known). */
interface DevKey {
  line: string;
  exported?: string;
}

/**
 * Registers the given key, or creates the dev key on the first start (its secret is shown then
 * only: the database keeps its hash).
 */
async function ensureDevKey(server: VisageServer, given: string | undefined): Promise<DevKey> {
  const cap = DEFAULT_LIMITS.defaultConcurrencyCap;
  if (given) {
    const r = await keyAdmin.ensure(server.store, 'dev', cap, given);
    if (r.key.revoked_at) throw new UsageError('VISAGE_DEV_KEY names a revoked key');
    const state = r.created ? 'registered now' : 'already registered';
    return { line: `Dev key:     $VISAGE_DEV_KEY (${state})`, exported: '$VISAGE_DEV_KEY' };
  }
  const keys = await keyAdmin.list(server.store);
  if (keys.some((k) => k.name === 'dev')) {
    return {
      line: 'Dev key:     created on the first start (shown then); `visage keys create` makes another',
    };
  }
  const created = await keyAdmin.create(server.store, 'dev', cap);
  return {
    line: `Dev key (shown once, store it now): ${created.secret}`,
    exported: created.secret,
  };
}
