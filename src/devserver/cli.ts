// SPDX-License-Identifier: GPL-3.0-or-later
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { randomBytes } from 'node:crypto';
import { DEFAULT_HOST, startDevServer } from './index.js';

export const LIVEKIT_USAGE = `Usage: visage livekit [options]

Runs the embedded LiveKit-compatible server alone (development and tests, not production).

Options:
  --port <port>          TCP port for signalling, validation and Twirp (default 7880)
  --host <address>       signalling listen address (default 127.0.0.1, this machine only;
                         0.0.0.0 with --node-ip). Any other address opens the server to
                         the network: a warning is logged
  --keys <key:secret>    API key and secret accepted in tokens; repeat or comma-separate
                         for several (default: a random pair for this run, printed at start)
  --node-ip <address>    address advertised in ICE candidates (default: the first
                         non-loopback IPv4 address). Naming it also opens signalling on
                         all interfaces unless --host says otherwise
  --udp-ports <min-max>  UDP port range for media (default: any free port)
  --log-level <level>    pino level: trace, debug, info, warn, error (default info)
  -h, --help             show this help`;

class LivekitUsageError extends Error {}

interface LivekitCommandOptions {
  port: number;
  host: string;
  keys: Record<string, string>;
  /** True when no --keys were given and `keys` was made up for this run. */
  generatedKeys: boolean;
  nodeIp?: string;
  udpPortRange?: [number, number];
  logLevel: string;
}

/**
 * `visage livekit`: starts the server and runs until SIGINT/SIGTERM. Returns the exit code:
 * 0 after a signal or --help, 2 for bad flags, 1 when the server cannot start.
 */
export async function runLivekitCommand(argv: string[]): Promise<number> {
  let options: LivekitCommandOptions | 'help';
  try {
    options = parseLivekitArgs(argv);
  } catch (err) {
    if (!(err instanceof LivekitUsageError) && !isParseArgsError(err)) throw err;
    console.error(`visage livekit: ${(err as Error).message}`);
    console.error('Run `visage livekit --help` for usage.');
    return 2;
  }
  if (options === 'help') {
    console.log(LIVEKIT_USAGE);
    return 0;
  }

  const logger = pino({ level: options.logLevel });
  let server;
  try {
    server = await startDevServer({
      port: options.port,
      host: options.host,
      keys: options.keys,
      nodeIp: options.nodeIp,
      udpPortRange: options.udpPortRange,
      logger,
    });
  } catch (err) {
    console.error(`visage livekit: cannot start: ${(err as Error).message}`);
    return 1;
  }
  console.log(
    `LiveKit-compatible server at ${server.url} (API keys: ${Object.keys(server.keys).join(', ')})`,
  );
  if (options.generatedKeys) {
    const [[key, secret]] = Object.entries(options.keys) as [[string, string]];
    console.log(`No --keys given: this run accepts API key ${key} with secret ${secret}`);
  }

  // Run as a child with an IPC channel: its parent may ask for its memory (the churn bench),
  // after a full collection when the process runs with --expose-gc.
  process.on('message', (message: unknown) => {
    if ((message as { type?: unknown } | null)?.type !== 'memory') return;
    (globalThis as { gc?: () => void }).gc?.();
    const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
    process.send?.({ type: 'memory', rss, heapUsed, heapTotal, external });
  });
  const signal = await new Promise<NodeJS.Signals | 'parent exited'>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
    // Run as a child with an IPC channel (`visage dev`): stop when the parent is gone.
    if (process.connected) process.once('disconnect', () => resolve('parent exited'));
  });
  logger.info({ signal }, 'shutting down');
  await server.close();
  return 0;
}

export function parseLivekitArgs(argv: string[]): LivekitCommandOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      keys: { type: 'string', multiple: true },
      'node-ip': { type: 'string' },
      'udp-ports': { type: 'string' },
      'log-level': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';

  const port = values.port === undefined ? 7880 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new LivekitUsageError(`--port must be a port number, got '${values.port}'`);
  }

  // No well-known default: without --keys, a random pair that lives as long as this process.
  let keys: Record<string, string> = {
    [`API${randomBytes(9).toString('base64url')}`]: randomBytes(32).toString('base64url'),
  };
  if (values.keys) {
    keys = {};
    for (const pair of values.keys.flatMap((v) => v.split(','))) {
      const separator = pair.indexOf(':');
      const key = pair.slice(0, separator).trim();
      const secret = pair.slice(separator + 1).trim();
      if (separator <= 0 || !key || !secret) {
        throw new LivekitUsageError(`--keys expects key:secret, got '${pair}'`);
      }
      keys[key] = secret;
    }
  }

  let udpPortRange: [number, number] | undefined;
  if (values['udp-ports'] !== undefined) {
    const match = /^(\d+)-(\d+)$/.exec(values['udp-ports']);
    const min = Number(match?.[1]);
    const max = Number(match?.[2]);
    if (!match || min < 1 || max > 65535 || min >= max) {
      throw new LivekitUsageError(`--udp-ports expects min-max, got '${values['udp-ports']}'`);
    }
    udpPortRange = [min, max];
  }

  const logLevel = values['log-level'] ?? 'info';
  if (!['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].includes(logLevel)) {
    throw new LivekitUsageError(`--log-level: unknown level '${logLevel}'`);
  }

  const nodeIp = values['node-ip'];
  if (nodeIp !== undefined && !/^\d{1,3}(\.\d{1,3}){3}$/.test(nodeIp)) {
    throw new LivekitUsageError(`--node-ip expects an IPv4 address, got '${nodeIp}'`);
  }

  const host = values.host ?? (nodeIp === undefined ? DEFAULT_HOST : '0.0.0.0');
  return { port, host, keys, generatedKeys: !values.keys, nodeIp, udpPortRange, logLevel };
}

function isParseArgsError(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}
