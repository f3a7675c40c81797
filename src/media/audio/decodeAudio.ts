// SPDX-License-Identifier: GPL-3.0-or-later
import decode, { type AudioData, type StreamDecoder } from 'audio-decode';
import {
  AudioDecodeError,
  AudioTooLongError,
  UnreadableAudioError,
  UnsupportedAudioError,
} from './audioDecodeError.js';
import { checkAudioShape } from './audioBounds.js';
import { sniffAudioFormat, type AudioFormat, type SniffedFormat } from './audioFormat.js';
import { readAudioHeader } from './audioHeader.js';
import { mp4DeclaredDurationMs } from './mp4Duration.js';
import { downmixToMono } from './pcmConversion.js';
import { decodeRawPcm, parseRawPcmType } from './rawPcm.js';

export interface DecodedAudio {
  format: AudioFormat;
  /** Native rate of the source; nothing is resampled here (Opus is always 48 kHz). */
  sampleRate: number;
  /** Channel count of the source before the downmix. */
  channels: number;
  /** All channels averaged into one, float in [-1, 1]. */
  mono: Float32Array;
  durationMs: number;
}

export interface DecodeAudioOptions {
  /**
   * The declared Content-Type. Only consulted for raw PCM (`audio/L16;rate=N;channels=C`), which
   * has no magic bytes; every other format is identified from its bytes.
   */
  contentType?: string;
  /**
   * Refuse audio longer than this with AudioTooLongError. Checked while decoding (and from the
   * header for m4a), so a small file that expands to hours of PCM is stopped early.
   */
  maxDurationMs?: number;
}

/** Bytes handed to a streaming decoder at a time, so the duration limit is checked as it goes. */
const FEED_BYTES = 64 * 1024;

function decoderFor(sniffed: SniffedFormat): () => Promise<StreamDecoder> {
  switch (sniffed.format) {
    case 'wav':
      return decode.wav;
    case 'mp3':
      return decode.mp3;
    case 'flac':
      return decode.flac;
    case 'm4a':
      return decode.m4a;
    case 'webm':
      return decode.webm;
    case 'ogg':
      if (sniffed.oggCodec === 'opus') return decode.opus;
      if (sniffed.oggCodec === 'flac') return decode.flac;
      return decode.oga;
  }
}

function concat(chunks: Float32Array[]): Float32Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Float32Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Decode an uploaded clip or an `audio` payload to mono float PCM at its native rate.
 *
 * Formats: wav, mp3, ogg (opus, vorbis, flac), webm (opus/vorbis), m4a (aac), flac, and raw
 * `audio/L16` by content type. Decoding is pure JS/WASM (`audio-decode`), so untrusted uploads
 * never reach a native decoder.
 *
 * Errors: UnsupportedAudioError when the bytes are not one of those formats; UnreadableAudioError
 * when they are but nothing can be decoded. A file truncated mid-stream decodes to whatever
 * complete frames it holds (the decoders are streaming decoders), which is the useful behaviour
 * for a clip cut short by an upload limit; it is only unreadable when no audio comes out at all.
 * AudioTooLongError past `maxDurationMs`.
 */
export async function decodeAudio(
  bytes: Uint8Array,
  opts: DecodeAudioOptions = {},
): Promise<DecodedAudio> {
  const rawType = opts.contentType ? parseRawPcmType(opts.contentType) : undefined;
  let format: AudioFormat;
  let sampleRate: number;
  let channels: number;
  let mono: Float32Array;

  if (rawType) {
    format = 'pcm';
    sampleRate = rawType.sampleRate;
    const frames = Math.floor(bytes.length / (2 * rawType.channels));
    if ((frames / sampleRate) * 1000 > (opts.maxDurationMs ?? Infinity)) {
      throw new AudioTooLongError(opts.maxDurationMs!);
    }
    const channelData = decodeRawPcm(bytes, rawType);
    channels = channelData.length;
    mono = downmixToMono(channelData);
  } else {
    if (bytes.length === 0) throw new UnreadableAudioError('empty audio body');
    const sniffed = sniffAudioFormat(bytes);
    if (!sniffed) {
      throw new UnsupportedAudioError(
        'not a supported audio format (wav, mp3, ogg, webm, m4a, flac, or audio/L16)',
      );
    }
    format = sniffed.format;
    const limitMs = opts.maxDurationMs ?? Infinity;
    // Declared sizes are checked before the decoder allocates anything for them.
    const header = readAudioHeader(bytes, sniffed);
    if (header) {
      checkAudioShape(format, header.channels, header.sampleRate);
      if (header.durationMs !== undefined && header.durationMs > limitMs) {
        throw new AudioTooLongError(limitMs);
      }
    }
    if (format === 'm4a') {
      const declared = mp4DeclaredDurationMs(bytes);
      if (declared !== undefined && declared > limitMs) throw new AudioTooLongError(limitMs);
    }
    // Each decoded part is checked and folded to mono at once: only the mono signal is kept.
    const chunks: Float32Array[] = [];
    let decodedFrames = 0;
    let shape: { channels: number; sampleRate: number } | undefined;
    const keep = (part: AudioData) => {
      if (part.channelData.length === 0) return;
      if (!shape) {
        checkAudioShape(format, part.channelData.length, part.sampleRate);
        shape = { channels: part.channelData.length, sampleRate: part.sampleRate };
      } else if (
        part.channelData.length !== shape.channels ||
        part.sampleRate !== shape.sampleRate
      ) {
        throw new UnreadableAudioError(`${format} audio changes its channels or rate mid-stream`);
      }
      const chunk = downmixToMono(part.channelData);
      chunks.push(chunk);
      decodedFrames += chunk.length;
      if ((decodedFrames / shape.sampleRate) * 1000 > limitMs) {
        throw new AudioTooLongError(limitMs);
      }
    };
    let decoder: StreamDecoder | undefined;
    try {
      decoder = await decoderFor(sniffed)();
      for (let offset = 0; offset < bytes.length; offset += FEED_BYTES) {
        keep(await decoder(bytes.subarray(offset, offset + FEED_BYTES)));
      }
      keep(await decoder());
    } catch (error) {
      if (error instanceof AudioDecodeError) {
        decoder?.free();
        throw error;
      }
      // A stream decoder frees itself on error; anything decoded before the error is kept only
      // when there is some, otherwise the file is unreadable.
      if (chunks.length === 0) {
        throw new UnreadableAudioError(`cannot decode ${format} audio: ${describe(error)}`);
      }
    }
    mono = concat(chunks);
    channels = shape?.channels ?? 0;
    sampleRate = shape?.sampleRate ?? 0;
  }

  if (mono.length === 0 || !(sampleRate > 0)) {
    throw new UnreadableAudioError(`${format} audio contains no decodable samples`);
  }
  let finite = true;
  for (let i = 0; i < mono.length; i += 97) {
    if (!Number.isFinite(mono[i]!)) {
      finite = false;
      break;
    }
  }
  if (!finite) throw new UnreadableAudioError(`${format} audio decoded to invalid samples`);
  if ((mono.length / sampleRate) * 1000 > (opts.maxDurationMs ?? Infinity)) {
    throw new AudioTooLongError(opts.maxDurationMs!);
  }
  return {
    format,
    sampleRate,
    channels,
    mono,
    durationMs: (mono.length / sampleRate) * 1000,
  };
}
