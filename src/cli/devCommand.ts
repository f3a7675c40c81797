// SPDX-License-Identifier: GPL-3.0-or-later
import { defaultNodeIp } from '../devserver/nodeAddress.js';
import { dataDirFrom } from './dataDir.js';
import { environmentWarnings, nodeSettingsFrom, readEnvironment } from './environment.js';
import { livekitCredentialsFor, parseKeyPair } from './livekitCredentials.js';
import { printRenamedWarnings, renamedFlag } from './renamedSettings.js';
import { intFlag, parseFlags } from './usage.js';

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
  --media-processes N    media processes, each with its own event loop (default: one per
                         core, $VISAGE_MEDIA_PROCESSES); 0 runs the media in the API process
                         (--workers N: the old name, still read, with a warning)
  --verbose              print the JSON log lines during the start-up too (by default they are
                         held until the media processes are up, and then only warnings and
                         errors are shown)
  -h, --help             show this help

Environment: VISAGE_VIDEO_CODEC (h264 or vp8) is the avatars' video codec (default h264);
VISAGE_TTS_ENGINE and the providers' keys choose the voice engine (see docs/configuration.md).`;

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
    'media-processes': { type: 'string' },
    workers: { type: 'string' },
    verbose: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return (out(DEV_USAGE), 0);
  const env = readEnvironment();
  const warnings = environmentWarnings();
  const mediaProcesses = renamedFlag(values, 'workers', warnings);
  printRenamedWarnings(warnings);
  const dataDir = dataDirFrom(values['data-dir'], env);
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
  // The node (database, media, LiveKit) is loaded only now: printing the credentials above
  // stays instant.
  const { runDevNode } = await import('./devNode.js');
  const node = nodeSettingsFrom(env);
  return runDevNode(
    {
      host: values.host ?? '127.0.0.1',
      port: intFlag(values.port, 'port', 8080),
      dataDir,
      maxSessions: intFlag(values['max-sessions'], 'max-sessions', node.maxSessions, 1),
      mediaProcesses: intFlag(mediaProcesses, 'media-processes', node.mediaProcesses),
      livekit: {
        port: livekitPort,
        host: livekitHost,
        nodeIp: values['node-ip'],
        apiKey,
        apiSecret,
      },
      env,
      verbose: values.verbose ?? false,
    },
    out,
  );
}
