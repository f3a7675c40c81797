import {
  DEFAULT_LIMITS,
  defaultMaxSessions,
  defaultMediaWorkers,
  defaultNodeId,
  limitsFromEnv,
} from '../server/config.js';
import { defaultNodeIp } from '../devserver/nodeAddress.js';
import type { Logger } from 'pino';
import type { MediaCore } from '../media/mediaCore.js';
import { reportStep, type StartupProgress } from '../media/startupProgress.js';
import { keyAdmin } from '../server/keyAdmin.js';
import { createLogger } from '../server/logger.js';
import { mediaCoreFor } from '../server/mediaCoreFor.js';
import { cacheDirOf, startVisage, type VisageServer } from '../server/runtime.js';
import { VERSION } from '../version.js';
import { databaseUrlFromEnv, dataDirFrom } from './dataDir.js';
import { livekitCredentialsFor, parseKeyPair } from './livekitCredentials.js';
import { startLivekitProcess, type LivekitProcess } from './livekitProcess.js';
import { releaseNativeRuntime } from './releaseNative.js';
import { untilSignal } from './runUntilSignal.js';
import { startupReport } from './startupReport.js';
import { intFlag, parseFlags, UsageError } from './usage.js';
import { requireMediaSettings } from './mediaSettings.js';

export const DEV_USAGE = `Usage: visage dev [options]

Runs Visage on one machine with embedded defaults: the HTTP API, an embedded database in the
data directory and an embedded LiveKit-compatible server. Creates a development key on first
start and prints it once (or registers $VISAGE_DEV_KEY=sk_... instead).

Options:
  --host HOST            API address (default 127.0.0.1)
  --port PORT            API port (default 8080)
  --data-dir DIR         data directory (default $VISAGE_DATA_DIR or ./.visage)
  --livekit-port PORT    embedded LiveKit server port (default 7880)
  --livekit-host ADDR    embedded LiveKit signalling address (default 127.0.0.1: this machine
                         only; 0.0.0.0 when --node-ip is given). Opening it logs a warning
  --livekit-keys K:S     embedded LiveKit API key and secret (default: a random pair made on
                         the first start and kept in DATA_DIR/livekit-credentials.json, 0600)
  --node-ip ADDR         address the LiveKit server advertises for WebRTC (default: first
                         non-loopback IPv4; browsers and SDKs ignore loopback)
  --print-livekit-credentials
                         print LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET for this
                         data directory (the examples read them) and exit
  --max-sessions N       sessions this node runs at most
  --workers N            media worker processes, each with its own event loop (default: one
                         per core, $VISAGE_WORKERS); 0 runs the media in the API process
  -h, --help             show this help

Environment: VISAGE_VIDEO_CODEC (h264 or vp8) is the avatars' video codec (default h264);
VISAGE_TTS_ENGINE and the providers' keys choose the voice engine (see the README).`;

/** Registers $VISAGE_DEV_KEY, or creates the dev key on the first start and prints it once. */
async function ensureDevKey(server: VisageServer, out: (line: string) => void) {
  const given = process.env.VISAGE_DEV_KEY;
  const cap = DEFAULT_LIMITS.defaultConcurrencyCap;
  if (given) {
    if (!/^sk_[0-9A-Za-z]{16,}$/.test(given)) {
      throw new UsageError('VISAGE_DEV_KEY must look like sk_ followed by 16+ letters or digits');
    }
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

export async function runDevCommand(argv: string[], out: (line: string) => void) {
  const { values } = parseFlags(argv, {
    host: { type: 'string' },
    port: { type: 'string' },
    'data-dir': { type: 'string' },
    'livekit-port': { type: 'string' },
    'livekit-keys': { type: 'string' },
    'livekit-host': { type: 'string' },
    'node-ip': { type: 'string' },
    'print-livekit-credentials': { type: 'boolean' },
    'max-sessions': { type: 'string' },
    workers: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return (out(DEV_USAGE), 0);
  requireMediaSettings();
  const databaseUrl = databaseUrlFromEnv();
  const dataDir = dataDirFrom(values['data-dir']);
  // Never the well-known devkey/secret: the operator's pair, else this data directory's own.
  const { apiKey, apiSecret } = values['livekit-keys']
    ? parseKeyPair(values['livekit-keys'], '--livekit-keys')
    : livekitCredentialsFor(dataDir);
  const livekitPort = intFlag(values['livekit-port'], 'livekit-port', 7880);
  const livekitHost = values['livekit-host'] ?? (values['node-ip'] ? '0.0.0.0' : '127.0.0.1');
  if (values['print-livekit-credentials']) {
    const open = livekitHost === '0.0.0.0' || livekitHost === '::';
    const host = open ? (values['node-ip'] ?? defaultNodeIp()) : livekitHost;
    out(`LIVEKIT_URL=ws://${host}:${livekitPort}`);
    out(`LIVEKIT_API_KEY=${apiKey}`);
    out(`LIVEKIT_API_SECRET=${apiSecret}`);
    return 0;
  }
  const port = intFlag(values.port, 'port', 8080);
  const maxSessions = intFlag(values['max-sessions'], 'max-sessions', defaultMaxSessions(), 1);
  const workers = intFlag(values.workers, 'workers', defaultMediaWorkers());
  const log = createLogger();
  const limits = limitsFromEnv();
  const report = startupReport(out);
  out(`Visage ${VERSION} (dev): starting, data in ${dataDir}`);
  // Independent steps run at once: the avatars and the speech engine get ready while the
  // LiveKit child starts, and the database opens while they finish.
  const media = startDevMediaCore(log, dataDir, workers, limits.agentAbsenceMs, report.progress);
  // The embedded LiveKit server runs in a child process: its SFU would otherwise take most of
  // the event loop the avatars' media needs (see the README's measured figures).
  const livekit = await startDevLivekit(media, report.progress, () =>
    startLivekitProcess({
      port: livekitPort,
      host: livekitHost,
      keys: { [apiKey]: apiSecret },
      nodeIp: values['node-ip'],
    }),
  );
  let server: VisageServer;
  try {
    server = await startVisage(
      {
        host: values.host ?? '127.0.0.1',
        port,
        dataDir,
        databaseUrl,
        nodeId: defaultNodeId(),
        maxSessions,
        mediaWorkers: workers,
        allowPrivateUrls: process.env.VISAGE_ALLOW_PRIVATE_URLS === '1',
        limits,
        livekit: { url: livekit.url, apiKey, apiSecret },
        version: VERSION,
      },
      { log, media, progress: report.progress },
    );
  } catch (err) {
    await livekit.close();
    await media.then((m) => m.close()).catch(() => undefined);
    throw err;
  }
  report.ready(`Visage ${VERSION} (dev)`);
  out(`  API:      ${server.url}  (OpenAPI: ${server.url}/v1/openapi.json)`);
  out(
    `  LiveKit:  ${livekit.url}  (API key ${apiKey}; \`visage dev --print-livekit-credentials\`)`,
  );
  out(`  Data:     ${dataDir}`);
  await ensureDevKey(server, out);
  out('Press Ctrl-C to stop.');
  const signal = await untilSignal();
  server.log.info({ signal }, 'shutting down');
  await server.close(); // closes the media core too
  await livekit.close();
  await releaseNativeRuntime();
  return 0;
}

/**
 * Starts the media core (face atlases from `<dataDir>/cache`, speech engine warm-up) without
 * waiting for it; `startVisage` awaits it together with the database.
 */
function startDevMediaCore(
  log: Logger,
  dataDir: string,
  workers: number,
  agentAbsenceMs: number,
  progress: StartupProgress,
): Promise<MediaCore> {
  const media = mediaCoreFor({
    workers,
    log,
    agentAbsenceMs,
    cacheDir: cacheDirOf(dataDir),
    progress,
  });
  media.catch(() => undefined); // its failure is reported where it is awaited
  return media;
}

/** Starts the LiveKit child as a reported step; if it fails, the media core is released. */
async function startDevLivekit(
  media: Promise<MediaCore>,
  progress: StartupProgress,
  start: () => Promise<LivekitProcess>,
): Promise<LivekitProcess> {
  try {
    return await reportStep(
      progress,
      'livekit',
      'starting the embedded LiveKit server',
      start,
      (p) => `listening at ${p.url}`,
    );
  } catch (err) {
    await media.then((m) => m.close()).catch(() => undefined);
    throw err;
  }
}
