// SPDX-License-Identifier: GPL-3.0-or-later
// Servers that tests start log to files, not into the test output: `npm test` stays a readable
// list of results. Each test file gets `.tmp/logs/<test file>.log` (JSON lines, debug level;
// VISAGE_TEST_LOG_LEVEL changes it), and a failing test prints where its file is (see
// `pointAtLogsOnFailure`, installed by the vitest setup file).
import { mkdirSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { destination, pino, type DestinationStream, type Logger } from 'pino';
import { expect } from 'vitest';

const LOG_DIR = join('.tmp', 'logs');
const streams = new Map<string, DestinationStream>();

/** The log file of the test file now running (one per file; every server of it shares it). */
export function testLogPath(): string {
  const testPath = expect.getState().testPath ?? 'unknown';
  const name = relative('test', testPath).replaceAll('/', '__') || basename(testPath);
  // The same file can run in two vitest projects (PGlite and PostgreSQL) at once.
  const project = process.env.VISAGE_TEST_DATABASE === 'postgres' ? '.postgres' : '';
  return join(LOG_DIR, `${name}${project}.log`);
}

function fileStream(path: string): DestinationStream {
  const open = streams.get(path);
  if (open) return open;
  mkdirSync(LOG_DIR, { recursive: true });
  const stream = destination({ dest: path, sync: true, append: false });
  streams.set(path, stream);
  return stream;
}

/**
 * The test file's log file as a stream, for servers in other processes whose JSON lines the
 * test copies into it.
 */
export function testLogStream(): DestinationStream {
  return fileStream(testLogPath());
}

/**
 * A logger for a server a test starts: JSON lines into the test file's log file. `extra`, when
 * given, sees every line too (for tests that assert on logs).
 */
export function testLogger(extra?: (line: Record<string, unknown>) => void): Logger {
  const level = process.env.VISAGE_TEST_LOG_LEVEL ?? 'debug';
  const file = fileStream(testLogPath());
  if (!extra) return pino({ level }, file);
  return pino(
    { level },
    {
      write(line: string) {
        file.write(line);
        extra(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
}

/** For the setup file: after a failed test, say where the servers' logs are. */
export function pointAtLogsOnFailure(failed: boolean): void {
  const path = testLogPath();
  if (failed && streams.has(path)) console.error(`server logs of this test file: ${path}`);
}
