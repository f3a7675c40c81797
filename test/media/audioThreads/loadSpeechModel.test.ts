// SPDX-License-Identifier: GPL-3.0-or-later
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { AudioThreadPool } from '../../../src/media/audioThreads/index.js';

/**
 * The voice-activity model can be loaded before the first voice is made (`visage dev`/`serve`
 * do it at start-up), and the thread that loaded it then finds speech.
 */
const pool = new AudioThreadPool({ size: 1, taskTimeoutMs: 120_000 });
afterAll(() => pool.close());

describe('loading the speech model ahead of use', () => {
  it('loads on the pool thread, which then tells speech from silence', async () => {
    await expect(pool.loadSpeechModel()).resolves.toBeUndefined();
    const clip = await pool.decode(
      new Uint8Array(readFileSync('test/fixtures/audio/voice-flite-slt-female.mp3')),
    );
    const speech = await pool.detectSpeech(clip.mono, clip.sampleRate);
    const silence = await pool.detectSpeech(new Float32Array(16_000 * 3), 16_000);
    expect(speech.hasSpeech).toBe(true);
    expect(silence.hasSpeech).toBe(false);
    expect(silence.speechSeconds).toBe(0);
  }, 180_000);
});
