// SPDX-License-Identifier: GPL-3.0-or-later
import { availableParallelism, hostname } from 'node:os';
import { z } from 'zod';
import { DEFAULT_LIMITS, defaultMaxSessions, type Limits } from '../server/config.js';
import { RENAMED_VARIABLES, renameEnvironment } from './renamedSettings.js';
import { UsageError } from './usage.js';

/**
 * Every environment variable the `visage` commands read, with what it means: parsed here, once,
 * and handed down as options (library code reads no environment). docs/configuration.md lists
 * the same variables; a test holds the two together. Empty counts as unset.
 */
const whole = (min: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `must be a whole number ≥ ${min}`)
    .transform(Number)
    .refine((n) => n >= min, `must be a whole number ≥ ${min}`);
const text = () => z.string().trim().min(1);
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(values, { error: `must be one of ${values.join(', ')}` }));

export const ENVIRONMENT = z.object({
  // Where the API listens and keeps its data.
  VISAGE_HOST: text().optional().describe('where `visage serve` listens (default 0.0.0.0)'),
  VISAGE_PORT: whole(0).optional().describe("the API's port (default 8080)"),
  PORT: whole(0).optional().describe('the port when VISAGE_PORT is unset (platforms set it)'),
  VISAGE_DATA_DIR: text().optional().describe('the data directory (default ./.visage)'),
  DATABASE_URL: z
    .string()
    .trim()
    .regex(/^postgres(ql)?:\/\/./, 'must be a postgres:// or postgresql:// URL')
    .optional()
    .describe('a PostgreSQL server shared by every node, instead of the embedded database'),
  // The node.
  VISAGE_MAX_SESSIONS: whole(1).optional().describe('sessions this node runs at most'),
  VISAGE_NODE_ID: text().optional().describe("this node's name in a cluster (default: hostname)"),
  VISAGE_MEDIA_PROCESSES: whole(0).optional().describe('media processes (default: one per core)'),
  VISAGE_MEDIA_PROCESS_MAX_SESSIONS: whole(0)
    .optional()
    .describe('sessions a media process runs before a fresh one replaces it (default 100)'),
  // Limits of every key.
  VISAGE_IDLE_TIMEOUT_SECONDS: whole(1).optional().describe('idle timeout of a session'),
  VISAGE_MAX_DURATION_SECONDS: whole(1).optional().describe('longest session'),
  VISAGE_DEFAULT_CAP: whole(1).optional().describe('concurrency cap of a new key'),
  VISAGE_RATE_PER_SECOND: whole(1).optional().describe("a key's sustained request rate"),
  VISAGE_RATE_BURST: whole(1).optional().describe("a key's request burst"),
  VISAGE_IMAGE_MAX_PIXELS: whole(1).optional().describe('largest photo avatar picture'),
  VISAGE_MIN_FACE_PX: whole(1).optional().describe("smallest face in a photo avatar's picture"),
  VISAGE_ALLOW_PRIVATE_URLS: z
    .enum(['0', '1'], { error: 'must be 1 (or 0)' })
    .optional()
    .describe('1: URLs may name private addresses (development and tests only)'),
  VISAGE_PUBLIC_URL: z
    .string()
    .trim()
    .max(2000)
    .regex(/^https?:\/\/[^\s?#]+$/, 'must be an http(s) URL without query or fragment')
    .optional()
    .describe("the service's public base URL, for the URLs it hands out (default: the request's)"),
  VISAGE_DEV_KEY: z
    .string()
    .trim()
    .regex(/^sk_[0-9A-Za-z]{16,}$/, 'must look like sk_ followed by 16+ letters or digits')
    .optional()
    .describe('`visage dev` registers this key instead of creating one'),
  // Media.
  VISAGE_VIDEO_CODEC: oneOf(['h264', 'vp8']).optional().describe("the avatars' video codec"),
  VISAGE_TTS_ENGINE: oneOf(['espeak', 'elevenlabs', 'cartesia'])
    .optional()
    .describe('the speech engine of new voices (default espeak)'),
  VISAGE_TTS_THREAD: oneOf(['thread', 'inline'])
    .optional()
    .describe("inline: espeak synthesizes on the session's own thread"),
  ELEVENLABS_API_KEY: text().optional().describe("ElevenLabs' API key"),
  ELEVENLABS_BASE_URL: text().optional().describe("ElevenLabs' API (default its public one)"),
  ELEVENLABS_MODEL: text().optional().describe('the ElevenLabs model'),
  CARTESIA_API_KEY: text().optional().describe("Cartesia's API key"),
  CARTESIA_BASE_URL: text().optional().describe("Cartesia's API (default its public one)"),
  CARTESIA_MODEL: text().optional().describe('the Cartesia model'),
  // LiveKit, for `visage serve`.
  LIVEKIT_URL: text().optional().describe('the LiveKit deployment (serve)'),
  LIVEKIT_API_KEY: text().optional().describe("the LiveKit deployment's API key (serve)"),
  LIVEKIT_API_SECRET: text().optional().describe("the LiveKit deployment's API secret (serve)"),
  // Logs.
  VISAGE_LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .optional()
    .describe('the log level (default info)'),
});

/**
 * Variables read outside the CLI on purpose: the plugin's and client's option fallbacks (as
 * agents-js plugins do), rtc-node's log level (set once per process, before rtc-node loads) and
 * the glibc arena count the media processes inherit.
 */
export const READ_ELSEWHERE = [
  'VISAGE_API_KEY',
  'VISAGE_API_URL',
  'VISAGE_RTC_LOG_LEVEL',
  'MALLOC_ARENA_MAX',
] as const;

export type Environment = z.infer<typeof ENVIRONMENT>;

/**
 * Parses the environment once; a bad value is a UsageError that names the variable (as the
 * operator spelled it: an old name is read as its new one, see renamedSettings.ts).
 */
export function readEnvironment(given: NodeJS.ProcessEnv = process.env): Environment {
  const { env } = renameEnvironment(given);
  const present = Object.fromEntries(
    Object.keys(ENVIRONMENT.shape)
      .map((name) => [name, env[name]] as const)
      .filter(([, value]) => value !== undefined && value.trim() !== ''),
  );
  const parsed = ENVIRONMENT.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const read = String(issue.path[0]);
    const old = Object.entries(RENAMED_VARIABLES).find(
      ([from, to]) => to === read && given[from] === env[read] && given[read] !== env[read],
    );
    const name = old ? old[0] : read;
    // A secret (or a URL with a password in it) is never printed back.
    const got = /KEY|SECRET|DATABASE_URL/.test(name) ? '' : ` (got '${present[read]}')`;
    throw new UsageError(`${name} ${issue.message}${got}`);
  }
  return parsed.data;
}

/** The limits every key gets, with the environment's overrides. */
export function limitsFrom(env: Environment): Limits {
  return {
    ...DEFAULT_LIMITS,
    idleTimeoutSeconds: env.VISAGE_IDLE_TIMEOUT_SECONDS ?? DEFAULT_LIMITS.idleTimeoutSeconds,
    maxDurationSeconds: env.VISAGE_MAX_DURATION_SECONDS ?? DEFAULT_LIMITS.maxDurationSeconds,
    defaultConcurrencyCap: env.VISAGE_DEFAULT_CAP ?? DEFAULT_LIMITS.defaultConcurrencyCap,
    requestsPerSecond: env.VISAGE_RATE_PER_SECOND ?? DEFAULT_LIMITS.requestsPerSecond,
    requestBurst: env.VISAGE_RATE_BURST ?? DEFAULT_LIMITS.requestBurst,
    imageMaxPixels: env.VISAGE_IMAGE_MAX_PIXELS ?? DEFAULT_LIMITS.imageMaxPixels,
    minFacePx: env.VISAGE_MIN_FACE_PX ?? DEFAULT_LIMITS.minFacePx,
  };
}

/** What every node takes from the environment besides its limits and media settings. */
export function nodeSettingsFrom(env: Environment) {
  return {
    nodeId: env.VISAGE_NODE_ID ?? hostname(),
    maxSessions: env.VISAGE_MAX_SESSIONS ?? defaultMaxSessions(),
    mediaProcesses: env.VISAGE_MEDIA_PROCESSES ?? availableParallelism(),
    allowPrivateUrls: env.VISAGE_ALLOW_PRIVATE_URLS === '1',
    ...(env.VISAGE_PUBLIC_URL ? { publicUrl: env.VISAGE_PUBLIC_URL } : {}),
  };
}

/** A warning for each renamed variable or value the environment still uses. */
export function environmentWarnings(env: NodeJS.ProcessEnv = process.env): string[] {
  return renameEnvironment(env).warnings;
}
