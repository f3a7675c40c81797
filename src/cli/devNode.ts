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
import { untilSignal } from './runUntilSignal.js';
import { startupReport } from './startupReport.js';
import { UsageError } from './usage.js';

/** What `visage dev` runs, from its flags (see DEV_USAGE). */
export interface DevNodeOptions {
  host: string;
  port: number;
  dataDir: string;
  maxSessions: number;
  workers: number;
  livekit: {
    port: number;
    host: string;
    nodeIp: string | undefined;
    apiKey: string;
    apiSecret: string;
  };
  /** The rest of the settings (VISAGE_DEV_KEY: a key to register instead of creating one). */
  env: Environment;
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
  const log = createLogger({ level: o.env.VISAGE_LOG_LEVEL });
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
        nodeId: node.nodeId,
        maxSessions: o.maxSessions,
        mediaWorkers: o.workers,
        allowPrivateUrls: node.allowPrivateUrls,
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
    await livekit.then((p) => p.close()).catch(() => undefined);
    throw err;
  }
  const { url: livekitUrl, close: closeLivekit } = await livekit;
  report.ready(`Visage ${VERSION} (dev)`);
  out(`  API:      ${server.url}  (OpenAPI: ${server.url}/v1/openapi.json)`);
  out(
    `  LiveKit:  ${livekitUrl}  (API key ${o.livekit.apiKey}; \`visage dev --print-livekit-credentials\`)`,
  );
  out(`  Data:     ${o.dataDir}`);
  try {
    await ensureDevKey(server, o.env.VISAGE_DEV_KEY, out);
  } catch (err) {
    await server.close();
    await closeLivekit();
    throw err;
  }
  out('Press Ctrl-C to stop.');
  const signal = await untilSignal();
  server.log.info({ signal }, 'shutting down');
  await server.close(); // closes the media core too
  await closeLivekit();
  await releaseNativeRuntime();
  return 0;
}

/** Registers the given key, or creates the dev key on the first start and prints it once. */
async function ensureDevKey(
  server: VisageServer,
  given: string | undefined,
  out: (line: string) => void,
) {
  const cap = DEFAULT_LIMITS.defaultConcurrencyCap;
  if (given) {
    const r = await keyAdmin.ensure(server.store, 'dev', cap, given);
    if (r.key.revoked_at) throw new UsageError('VISAGE_DEV_KEY names a revoked key');
    out(`Dev key: $VISAGE_DEV_KEY (${r.created ? 'registered now' : 'already registered'})`);
    return;
  }
  const keys = await keyAdmin.list(server.store);
  if (keys.some((k) => k.name === 'dev')) {
    out('Dev key: created on the first start (shown then); `visage keys create` makes another.');
    return;
  }
  const created = await keyAdmin.create(server.store, 'dev', cap);
  out(`Dev key (shown once, store it now): ${created.secret}`);
}
