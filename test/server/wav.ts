// SPDX-License-Identifier: GPL-3.0-or-later
import { encodeWav } from '../../src/media/audio/index.js';

/** A 16-bit mono PCM WAV file holding a sine (tests need clips of exact lengths). */
export function sineWav(seconds: number, sampleRate = 16_000, frequency = 220): Uint8Array {
  const samples = new Int16Array(Math.round(seconds * sampleRate));
  for (let i = 0; i < samples.length; i++) {
    samples[i] = Math.round(Math.sin((2 * Math.PI * frequency * i) / sampleRate) * 0.5 * 32767);
  }
  return encodeWav(samples, sampleRate);
}

export function multipartClip(bytes: Uint8Array, filename = 'clip.wav', type = 'audio/wav') {
  const form = new FormData();
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>], { type }), filename);
  return form;
}
