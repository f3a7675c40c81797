// SPDX-License-Identifier: GPL-3.0-or-later
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  AudioDecodeError,
  AudioTooLongError,
  decodeAudio,
  mp4DeclaredDurationMs,
  UnreadableAudioError,
  UnsupportedAudioError,
  type AudioFormat,
} from '../../../src/media/audio/index.js';

const fixture = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(new URL(`../../fixtures/audio/${name}`, import.meta.url)));

function rms(x: Float32Array): number {
  let s = 0;
  for (const v of x) s += v * v;
  return Math.sqrt(s / x.length);
}

// The fixtures are one espeak-ng utterance (3.25 s, Debian espeak-ng) re-encoded by Debian
// ffmpeg; durations as reported by ffprobe for the source before encoder padding.
const cases: { file: string; format: AudioFormat; rate: number; channels: number; ms: number }[] = [
  { file: 'speech-stereo-8k.wav', format: 'wav', rate: 8000, channels: 2, ms: 1000 },
  { file: 'speech.mp3', format: 'mp3', rate: 16000, channels: 1, ms: 3252 },
  { file: 'speech-opus.ogg', format: 'ogg', rate: 48000, channels: 1, ms: 3252 },
  { file: 'speech-vorbis.ogg', format: 'ogg', rate: 16000, channels: 1, ms: 3252 },
  { file: 'speech.webm', format: 'webm', rate: 48000, channels: 1, ms: 3252 },
  { file: 'speech.m4a', format: 'm4a', rate: 16000, channels: 1, ms: 3252 },
  { file: 'speech.flac', format: 'flac', rate: 8000, channels: 1, ms: 1500 },
];

describe('decodeAudio', () => {
  for (const c of cases) {
    it(`decodes ${c.file} as ${c.format} with the right duration`, async () => {
      const decoded = await decodeAudio(fixture(c.file));
      expect(decoded.format).toBe(c.format);
      expect(decoded.sampleRate).toBe(c.rate);
      expect(decoded.channels).toBe(c.channels);
      expect(Math.abs(decoded.durationMs - c.ms)).toBeLessThan(60);
      expect(decoded.mono.length).toBe(Math.round((decoded.durationMs * c.rate) / 1000));
      // Real speech, not silence or noise at full scale.
      expect(rms(decoded.mono)).toBeGreaterThan(0.03);
      expect(rms(decoded.mono)).toBeLessThan(0.5);
    });
  }

  it('ignores the declared content type for compressed formats (sniffs the bytes)', async () => {
    const decoded = await decodeAudio(fixture('speech.mp3'), { contentType: 'audio/wav' });
    expect(decoded.format).toBe('mp3');
  });

  it('refuses bytes that are not audio with UnsupportedAudioError (415)', async () => {
    const samples = [
      new TextEncoder().encode('hello, this is not audio at all'),
      new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), // PNG
      Uint8Array.from({ length: 4096 }, (_, i) => (i * 2654435761) >>> 24),
    ];
    for (const bytes of samples) {
      const error = await decodeAudio(bytes).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnsupportedAudioError);
      expect(error).toBeInstanceOf(AudioDecodeError);
      expect((error as UnsupportedAudioError).code).toBe('unsupported_audio');
      expect((error as UnsupportedAudioError).status).toBe(415);
    }
  });

  it('reports an empty body as unreadable', async () => {
    await expect(decodeAudio(new Uint8Array(0))).rejects.toBeInstanceOf(UnreadableAudioError);
  });

  it('reports a recognised but truncated header as UnreadableAudioError (422)', async () => {
    for (const file of [
      'speech.mp3',
      'speech-opus.ogg',
      'speech.m4a',
      'speech.flac',
      'speech.webm',
    ]) {
      const error = await decodeAudio(fixture(file).subarray(0, 64)).catch((e: unknown) => e);
      expect(error, file).toBeInstanceOf(UnreadableAudioError);
      expect((error as UnreadableAudioError).code).toBe('unreadable_audio');
      expect((error as UnreadableAudioError).status).toBe(422);
    }
  });

  it('reports an m4a whose index (moov) was cut off as unreadable', async () => {
    const bytes = fixture('speech.m4a');
    await expect(decodeAudio(bytes.subarray(0, bytes.length >> 1))).rejects.toBeInstanceOf(
      UnreadableAudioError,
    );
  });

  it('decodes what is there when a streamable file is cut in half', async () => {
    const bytes = fixture('speech.mp3');
    const decoded = await decodeAudio(bytes.subarray(0, bytes.length >> 1));
    expect(decoded.durationMs).toBeGreaterThan(1200);
    expect(decoded.durationMs).toBeLessThan(2000);
  });
});

describe('decodeAudio duration limit', () => {
  it('refuses audio over maxDurationMs with AudioTooLongError (422 clip_too_long) in every format', async () => {
    for (const c of cases) {
      const error = await decodeAudio(fixture(c.file), { maxDurationMs: c.ms - 300 }).catch(
        (e: unknown) => e,
      );
      expect(error, c.file).toBeInstanceOf(AudioTooLongError);
      expect((error as AudioTooLongError).code).toBe('clip_too_long');
      expect((error as AudioTooLongError).status).toBe(422);
      const ok = await decodeAudio(fixture(c.file), { maxDurationMs: c.ms + 300 });
      expect(ok.durationMs).toBeGreaterThan(0);
    }
  });

  it('stops a 10 KB file that expands to 10 minutes before decoding it all', async () => {
    const bomb = fixture('silence-10min.flac');
    expect(bomb.length).toBeLessThan(12_000);
    const cpu = process.cpuUsage();
    await expect(decodeAudio(bomb, { maxDurationMs: 60_000 })).rejects.toBeInstanceOf(
      AudioTooLongError,
    );
    const { user, system } = process.cpuUsage(cpu);
    const limited = (user + system) / 1000;
    const full = await decodeAudio(bomb);
    expect(full.durationMs).toBe(600_000);
    // It gave up early: far less work than the full decode would take.
    expect(limited).toBeLessThan(1000);
  });

  it('reads the declared duration of an m4a without decoding it', () => {
    expect(mp4DeclaredDurationMs(fixture('speech.m4a'))).toBeCloseTo(3252, -1);
    expect(mp4DeclaredDurationMs(fixture('speech.mp3'))).toBeUndefined();
  });

  it('applies the limit to raw PCM from its length', async () => {
    await expect(
      decodeAudio(new Uint8Array(32000), {
        contentType: 'audio/L16;rate=16000',
        maxDurationMs: 500,
      }),
    ).rejects.toBeInstanceOf(AudioTooLongError);
  });
});

describe('decodeAudio with audio/L16', () => {
  const tone = Int16Array.from({ length: 1600 }, (_, i) =>
    Math.round(12000 * Math.sin((2 * Math.PI * 440 * i) / 16000)),
  );

  function encode(samples: Int16Array, littleEndian: boolean): Uint8Array {
    const bytes = new Uint8Array(samples.length * 2);
    const view = new DataView(bytes.buffer);
    samples.forEach((s, i) => view.setInt16(i * 2, s, littleEndian));
    return bytes;
  }

  it('decodes big-endian by default (RFC 2586 network byte order)', async () => {
    const decoded = await decodeAudio(encode(tone, false), {
      contentType: 'audio/L16;rate=16000;channels=1',
    });
    expect(decoded).toMatchObject({ format: 'pcm', sampleRate: 16000, channels: 1 });
    expect(decoded.durationMs).toBe(100);
    expect(decoded.mono[5]).toBeCloseTo(tone[5]! / 32768, 6);
  });

  it('honours endianness=little-endian', async () => {
    const decoded = await decodeAudio(encode(tone, true), {
      contentType: 'audio/l16; rate=16000; channels=1; endianness=little-endian',
    });
    expect(decoded.mono[7]).toBeCloseTo(tone[7]! / 32768, 6);
  });

  it('downmixes interleaved channels', async () => {
    const stereo = new Int16Array([1000, 3000, -2000, 0]);
    const decoded = await decodeAudio(encode(stereo, false), {
      contentType: 'audio/L16;rate=8000;channels=2',
    });
    expect(decoded.channels).toBe(2);
    expect(Array.from(decoded.mono)).toEqual([2000 / 32768, -1000 / 32768]);
  });

  it('refuses L16 without a rate and bodies that are not whole frames', async () => {
    await expect(
      decodeAudio(encode(tone, false), { contentType: 'audio/L16' }),
    ).rejects.toBeInstanceOf(UnsupportedAudioError);
    await expect(
      decodeAudio(new Uint8Array(3), { contentType: 'audio/L16;rate=16000' }),
    ).rejects.toBeInstanceOf(UnreadableAudioError);
  });
});
