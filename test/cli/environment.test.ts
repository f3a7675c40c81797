// SPDX-License-Identifier: GPL-3.0-or-later
// The environment is read once, in the CLI, against one schema; the configuration doc lists the
// same variables.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ENVIRONMENT,
  environmentWarnings,
  limitsFrom,
  READ_ELSEWHERE,
  readEnvironment,
} from '../../src/cli/environment.js';
import { mediaSettingsFrom } from '../../src/cli/mediaSettings.js';
import { RENAMED_VARIABLES } from '../../src/cli/renamedSettings.js';
import { UsageError } from '../../src/cli/usage.js';
import { DEFAULT_LIMITS } from '../../src/server/config.js';

describe('the environment', () => {
  it('reads the video codec in any case, with spaces around; empty is unset', () => {
    expect(readEnvironment({}).VISAGE_VIDEO_CODEC).toBeUndefined();
    expect(readEnvironment({ VISAGE_VIDEO_CODEC: '' }).VISAGE_VIDEO_CODEC).toBeUndefined();
    expect(readEnvironment({ VISAGE_VIDEO_CODEC: ' VP8 ' }).VISAGE_VIDEO_CODEC).toBe('vp8');
    expect(readEnvironment({ VISAGE_VIDEO_CODEC: 'H264' }).VISAGE_VIDEO_CODEC).toBe('h264');
  });

  it('refuses a bad value with a usage error that names the variable and the choices', () => {
    expect(() => readEnvironment({ VISAGE_VIDEO_CODEC: 'av1' })).toThrow(UsageError);
    expect(() => readEnvironment({ VISAGE_VIDEO_CODEC: 'av1' })).toThrow(
      "VISAGE_VIDEO_CODEC must be one of h264, vp8 (got 'av1')",
    );
    expect(() => readEnvironment({ VISAGE_TTS_ENGINE: 'say' })).toThrow(
      /VISAGE_TTS_ENGINE must be one of espeak, elevenlabs, cartesia/,
    );
  });

  it('parses every whole number the same way, with one message', () => {
    expect(readEnvironment({ VISAGE_MEDIA_PROCESSES: '0' }).VISAGE_MEDIA_PROCESSES).toBe(0);
    expect(readEnvironment({ VISAGE_RATE_BURST: ' 250 ' }).VISAGE_RATE_BURST).toBe(250);
    for (const bad of ['-1', '2.5', 'many', '1e3']) {
      expect(() => readEnvironment({ VISAGE_MEDIA_PROCESSES: bad })).toThrow(
        `VISAGE_MEDIA_PROCESSES must be a whole number ≥ 0 (got '${bad}')`,
      );
    }
    expect(() => readEnvironment({ VISAGE_DEFAULT_CAP: '0' })).toThrow(
      "VISAGE_DEFAULT_CAP must be a whole number ≥ 1 (got '0')",
    );
    expect(limitsFrom(readEnvironment({ VISAGE_IDLE_TIMEOUT_SECONDS: '60' }))).toEqual({
      ...DEFAULT_LIMITS,
      idleTimeoutSeconds: 60,
    });
  });

  it('never prints a secret or a database URL back', () => {
    const secretish = {
      VISAGE_DEV_KEY: 'sk_short',
      DATABASE_URL: 'mysql://user:hunter2@db/visage',
    };
    for (const [name, value] of Object.entries(secretish)) {
      let message = '';
      try {
        readEnvironment({ [name]: value });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(new RegExp(`^${name} `));
      expect(message).not.toContain(value);
    }
  });

  it("asks for a cloning provider's key before anything starts", () => {
    expect(() => mediaSettingsFrom(readEnvironment({ VISAGE_TTS_ENGINE: 'cartesia' }))).toThrow(
      /CARTESIA_API_KEY is not set/,
    );
    const media = mediaSettingsFrom(
      readEnvironment({ VISAGE_TTS_ENGINE: 'cartesia', CARTESIA_API_KEY: 'k' }),
    );
    // Read once, into typed options: no variable name travels on into the media.
    expect(media.tts).toEqual({
      defaultEngine: 'cartesia',
      espeakOn: 'thread',
      elevenlabs: undefined,
      cartesia: { apiKey: 'k', baseUrl: undefined, modelId: undefined },
    });
    expect(mediaSettingsFrom(readEnvironment({ VISAGE_TTS_THREAD: 'inline' })).tts).toMatchObject({
      espeakOn: 'caller',
    });
  });

  it('reads the old names of renamed settings as the new ones, with a warning for each', () => {
    const old = {
      VISAGE_WORKERS: '3',
      VISAGE_WORKER_MAX_SESSIONS: '7',
      VISAGE_TTS_THREAD: ' Worker ',
    };
    const env = readEnvironment(old);
    expect(env.VISAGE_MEDIA_PROCESSES).toBe(3);
    expect(env.VISAGE_MEDIA_PROCESS_MAX_SESSIONS).toBe(7);
    expect(env.VISAGE_TTS_THREAD).toBe('thread');
    expect(mediaSettingsFrom(env)).toMatchObject({
      maxSessionsPerProcess: 7,
      tts: { espeakOn: 'thread' },
    });
    expect(environmentWarnings(old)).toEqual([
      'VISAGE_WORKERS is deprecated: use VISAGE_MEDIA_PROCESSES',
      'VISAGE_WORKER_MAX_SESSIONS is deprecated: use VISAGE_MEDIA_PROCESS_MAX_SESSIONS',
      'VISAGE_TTS_THREAD=worker is deprecated: use VISAGE_TTS_THREAD=thread',
    ]);
    // The new name wins over the old one, and says the old one is ignored.
    const both = { VISAGE_WORKERS: '3', VISAGE_MEDIA_PROCESSES: '1' };
    expect(readEnvironment(both).VISAGE_MEDIA_PROCESSES).toBe(1);
    expect(environmentWarnings(both)).toEqual([
      'VISAGE_WORKERS is deprecated and ignored: VISAGE_MEDIA_PROCESSES is set',
    ]);
    // A bad value is reported under the name the operator set.
    expect(() => readEnvironment({ VISAGE_WORKERS: 'two' })).toThrow(
      "VISAGE_WORKERS must be a whole number ≥ 0 (got 'two')",
    );
    // The new names and values alone warn about nothing.
    expect(
      environmentWarnings({ VISAGE_MEDIA_PROCESSES: '2', VISAGE_TTS_THREAD: 'thread' }),
    ).toEqual([]);
    expect(readEnvironment({ VISAGE_TTS_THREAD: 'thread' }).VISAGE_TTS_THREAD).toBe('thread');
  });

  it('is documented: docs/configuration.md lists exactly the variables read', () => {
    const doc = readFileSync('docs/configuration.md', 'utf8');
    const table = doc.slice(doc.indexOf('## Every setting'));
    const documented = new Set(
      [...table.matchAll(/^\|([^|]*)\|/gm)].flatMap((row) =>
        [...row[1]!.matchAll(/`([A-Z][A-Z0-9_]{2,})(=[^`]*)?`/g)].map((m) => m[1]!),
      ),
    );
    // The old names of renamed variables are still read (and documented as such).
    const read = [
      ...Object.keys(ENVIRONMENT.shape),
      ...READ_ELSEWHERE,
      ...Object.keys(RENAMED_VARIABLES),
    ];
    expect(
      read.filter((name) => !documented.has(name)),
      'read but not documented',
    ).toEqual([]);
    expect(
      [...documented].filter((name) => !read.includes(name)),
      'documented but not read',
    ).toEqual([]);
  });
});
