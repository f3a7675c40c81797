// SPDX-License-Identifier: GPL-3.0-or-later
// The environment is read once, in the CLI, against one schema; the configuration doc lists the
// same variables.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ENVIRONMENT,
  limitsFrom,
  READ_ELSEWHERE,
  readEnvironment,
} from '../../src/cli/environment.js';
import { mediaSettingsFrom } from '../../src/cli/mediaSettings.js';
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
    expect(readEnvironment({ VISAGE_WORKERS: '0' }).VISAGE_WORKERS).toBe(0);
    expect(readEnvironment({ VISAGE_RATE_BURST: ' 250 ' }).VISAGE_RATE_BURST).toBe(250);
    for (const bad of ['-1', '2.5', 'many', '1e3']) {
      expect(() => readEnvironment({ VISAGE_WORKERS: bad })).toThrow(
        `VISAGE_WORKERS must be a whole number ≥ 0 (got '${bad}')`,
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

  it('is documented: docs/configuration.md lists exactly the variables read', () => {
    const doc = readFileSync('docs/configuration.md', 'utf8');
    const table = doc.slice(doc.indexOf('## Every setting'));
    const documented = new Set(
      [...table.matchAll(/^\|([^|]*)\|/gm)].flatMap((row) =>
        [...row[1]!.matchAll(/`([A-Z][A-Z0-9_]{2,})(=[^`]*)?`/g)].map((m) => m[1]!),
      ),
    );
    const read = [...Object.keys(ENVIRONMENT.shape), ...READ_ELSEWHERE];
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
