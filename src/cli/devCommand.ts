import {
  DEFAULT_LIMITS,
  defaultMaxSessions,
  defaultNodeId,
  limitsFromEnv,
} from '../server/config.js';
import { keyAdmin } from '../server/keyAdmin.js';
import { createLogger } from '../server/logger.js';
import { startVisage, type VisageServer } from '../server/runtime.js';
import { VERSION } from '../version.js';
import { dataDirFrom, rejectUnsupportedDatabaseUrl } from './dataDir.js';
import { startLivekitProcess } from './livekitProcess.js';
import { releaseNativeRuntime } from './releaseNative.js';
import { untilSignal } from './runUntilSignal.js';
import { intFlag, parseFlags, UsageError } from './usage.js';

export const DEV_USAGE = `Usage: visage dev [options]

Runs Visage on one machine with embedded defaults: the HTTP API, an embedded database in the
data directory and an embedded LiveKit-compatible server. Creates a development key on first
start and prints it once (or registers $VISAGE_DEV_KEY=sk_... instead).

Options:
  --host HOST            API address (default 127.0.0.1)
  --port PORT            API port (default 8080)
  --data-dir DIR         data directory (default $VISAGE_DATA_DIR or ./.visage)
  --livekit-port PORT    embedded LiveKit server port (default 7880)
  --livekit-keys K:S     embedded LiveKit API key and secret (default devkey:secret)
  --node-ip ADDR         address the LiveKit server advertises for WebRTC (default: first
                         non-loopback IPv4; browsers and SDKs ignore loopback)
  --max-sessions N       sessions this node runs at most
  -h, --help             show this help`;

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
    'node-ip': { type: 'string' },
    'max-sessions': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return (out(DEV_USAGE), 0);
  rejectUnsupportedDatabaseUrl();
  const [apiKey, apiSecret] = (values['livekit-keys'] ?? 'devkey:secret').split(':');
  if (!apiKey || !apiSecret) throw new UsageError('--livekit-keys must be KEY:SECRET');
  const log = createLogger();
  // The embedded LiveKit server runs in a child process: its SFU would otherwise take most of
  // the event loop the avatars' media needs (see the README's measured figures).
  const livekit = await startLivekitProcess({
    port: intFlag(values['livekit-port'], 'livekit-port', 7880),
    keys: { [apiKey]: apiSecret },
    nodeIp: values['node-ip'],
  });
  let server: VisageServer;
  try {
    server = await startVisage(
      {
        host: values.host ?? '127.0.0.1',
        port: intFlag(values.port, 'port', 8080),
        dataDir: dataDirFrom(values['data-dir']),
        nodeId: defaultNodeId(),
        maxSessions: intFlag(values['max-sessions'], 'max-sessions', defaultMaxSessions(), 1),
        allowPrivateUrls: process.env.VISAGE_ALLOW_PRIVATE_URLS === '1',
        limits: limitsFromEnv(),
        livekit: { url: livekit.url, apiKey, apiSecret },
        version: VERSION,
      },
      { log },
    );
  } catch (err) {
    await livekit.close();
    throw err;
  }
  out(`Visage ${VERSION} (dev)`);
  out(`  API:      ${server.url}  (OpenAPI: ${server.url}/v1/openapi.json)`);
  out(`  LiveKit:  ${livekit.url}  (API key ${apiKey}, secret ${apiSecret})`);
  out(`  Data:     ${dataDirFrom(values['data-dir'])}`);
  await ensureDevKey(server, out);
  out('Press Ctrl-C to stop.');
  const signal = await untilSignal();
  server.log.info({ signal }, 'shutting down');
  await server.close();
  await livekit.close();
  await releaseNativeRuntime();
  return 0;
}
