// SPDX-License-Identifier: GPL-3.0-or-later
import { createLogger } from '../server/logger.js';
import { startVisage } from '../server/runtime.js';
import { VERSION } from '../version.js';
import { dataDirFrom } from './dataDir.js';
import { installedDatabaseTemplate } from './databaseTemplateDir.js';
import {
  environmentWarnings,
  limitsFrom,
  nodeSettingsFrom,
  readEnvironment,
} from './environment.js';
import { releaseNativeRuntime } from './releaseNative.js';
import { printRenamedWarnings, renamedFlag } from './renamedSettings.js';
import { untilStopped } from './runUntilSignal.js';
import { intFlag, parseFlags, UsageError } from './usage.js';
import { mediaSettingsFrom } from './mediaSettings.js';

export const SERVE_USAGE = `Usage: visage serve [options]

Runs the Visage service for production against a real LiveKit deployment.

Environment:
  LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET   the LiveKit deployment (required)
  DATABASE_URL        a PostgreSQL server (postgres://...) for keys, sessions and files,
                      instead of the embedded database in the data directory
  VISAGE_HOST (0.0.0.0), VISAGE_PORT or PORT (8080), VISAGE_DATA_DIR (./.visage)
  VISAGE_MAX_SESSIONS, VISAGE_NODE_ID, VISAGE_MEDIA_PROCESSES, VISAGE_IDLE_TIMEOUT_SECONDS,
  VISAGE_MAX_DURATION_SECONDS, VISAGE_DEFAULT_CAP, VISAGE_RATE_PER_SECOND, VISAGE_RATE_BURST,
  VISAGE_LOG_LEVEL, VISAGE_VIDEO_CODEC (h264 or vp8: the avatars' video; default h264)

Options (override the environment):
  --host HOST, --port PORT, --data-dir DIR, --max-sessions N
  --media-processes N media processes (default: one per core); 0: media in this process
                      (--workers N: the old name, still read, with a warning)
  -h, --help`;

export async function runServeCommand(argv: string[], out: (line: string) => void) {
  const { values } = parseFlags(argv, {
    host: { type: 'string' },
    port: { type: 'string' },
    'data-dir': { type: 'string' },
    'max-sessions': { type: 'string' },
    'media-processes': { type: 'string' },
    workers: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return (out(SERVE_USAGE), 0);
  const env = readEnvironment();
  const warnings = environmentWarnings();
  const mediaProcesses = renamedFlag(values, 'workers', warnings);
  printRenamedWarnings(warnings);
  const media = mediaSettingsFrom(env);
  const node = nodeSettingsFrom(env);
  const { LIVEKIT_URL: url, LIVEKIT_API_KEY: apiKey, LIVEKIT_API_SECRET: apiSecret } = env;
  if (!url || !apiKey || !apiSecret) {
    const missing = Object.entries({
      LIVEKIT_URL: url,
      LIVEKIT_API_KEY: apiKey,
      LIVEKIT_API_SECRET: apiSecret,
    })
      .filter(([, value]) => !value)
      .map(([name]) => name);
    throw new UsageError(`visage serve needs ${missing.join(', ')} (a LiveKit deployment)`);
  }
  const server = await startVisage(
    {
      host: values.host ?? env.VISAGE_HOST ?? '0.0.0.0',
      port: intFlag(values.port, 'port', env.VISAGE_PORT ?? env.PORT ?? 8080),
      dataDir: dataDirFrom(values['data-dir'], env),
      databaseUrl: env.DATABASE_URL,
      databaseTemplate: installedDatabaseTemplate(),
      nodeId: node.nodeId,
      maxSessions: intFlag(values['max-sessions'], 'max-sessions', node.maxSessions, 1),
      mediaProcesses: intFlag(mediaProcesses, 'media-processes', node.mediaProcesses),
      allowPrivateUrls: node.allowPrivateUrls,
      ...(node.publicUrl ? { publicUrl: node.publicUrl } : {}),
      limits: limitsFrom(env),
      media,
      livekit: { url, apiKey, apiSecret },
      version: VERSION,
    },
    {
      log: createLogger({ level: env.VISAGE_LOG_LEVEL }),
      preloadSpeechModel: true,
      prepareStockAtlases: true,
      warmDatabase: true,
    },
  );
  out(`Visage ${VERSION} serving ${server.url} (LiveKit: ${url})`);
  const stopped = await untilStopped(server.failed);
  if (stopped instanceof Error) {
    process.stderr.write(`visage: the media processes could not start: ${stopped.message}\n`);
    await server.close();
    await releaseNativeRuntime();
    return 1;
  }
  server.log.info({ signal: stopped }, 'shutting down');
  await server.close();
  await releaseNativeRuntime();
  return 0;
}
