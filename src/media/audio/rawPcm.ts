// SPDX-License-Identifier: GPL-3.0-or-later
import { AUDIO_BOUNDS } from './audioBounds.js';
import { UnreadableAudioError, UnsupportedAudioError } from './audioDecodeError.js';

/**
 * Raw 16-bit PCM declared by a Content-Type such as `audio/L16;rate=16000;channels=1`.
 *
 * Byte order: RFC 2586 and RFC 3551 (section 4.5.11) define L16 as network byte order, i.e.
 * big-endian, and that is the default here. Many tools produce little-endian s16 (it is the
 * in-memory layout of an Int16Array on x86/ARM); they can say so with the parameter
 * `endianness=little-endian`, which some speech APIs already use for exactly this purpose.
 */
export interface RawPcmType {
  sampleRate: number;
  channels: number;
  littleEndian: boolean;
}

const MIN_RATE = AUDIO_BOUNDS.minSampleRate;
const MAX_RATE = AUDIO_BOUNDS.maxSampleRate;
const MAX_CHANNELS = AUDIO_BOUNDS.maxChannels;

/**
 * Parse an `audio/L16` content type. Returns undefined when the media type is not L16 at all;
 * throws UnsupportedAudioError when it is L16 with parameters we cannot honour.
 */
export function parseRawPcmType(contentType: string): RawPcmType | undefined {
  const [mediaType, ...paramParts] = contentType.split(';');
  if (mediaType?.trim().toLowerCase() !== 'audio/l16') return undefined;
  const params = new Map<string, string>();
  for (const part of paramParts) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim().toLowerCase();
    const value = part
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    params.set(key, value);
  }
  const rateText = params.get('rate');
  if (rateText === undefined) {
    throw new UnsupportedAudioError('audio/L16 needs a rate parameter, e.g. audio/L16;rate=16000');
  }
  const sampleRate = Number(rateText);
  if (!Number.isInteger(sampleRate) || sampleRate < MIN_RATE || sampleRate > MAX_RATE) {
    throw new UnsupportedAudioError(
      `audio/L16 rate must be an integer between ${MIN_RATE} and ${MAX_RATE}`,
    );
  }
  const channels = Number(params.get('channels') ?? '1');
  if (!Number.isInteger(channels) || channels < 1 || channels > MAX_CHANNELS) {
    throw new UnsupportedAudioError(`audio/L16 channels must be between 1 and ${MAX_CHANNELS}`);
  }
  const endianness = (params.get('endianness') ?? 'big-endian').toLowerCase();
  if (endianness !== 'big-endian' && endianness !== 'little-endian') {
    throw new UnsupportedAudioError('audio/L16 endianness must be big-endian or little-endian');
  }
  return { sampleRate, channels, littleEndian: endianness === 'little-endian' };
}

/** Decode interleaved s16 frames into one Float32Array per channel, in [-1, 1). */
export function decodeRawPcm(bytes: Uint8Array, type: RawPcmType): Float32Array[] {
  const frameBytes = 2 * type.channels;
  if (bytes.length === 0) throw new UnreadableAudioError('empty audio/L16 body');
  if (bytes.length % frameBytes !== 0) {
    throw new UnreadableAudioError(
      `audio/L16 body of ${bytes.length} bytes is not a whole number of ${frameBytes}-byte frames`,
    );
  }
  const frames = bytes.length / frameBytes;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = Array.from({ length: type.channels }, () => new Float32Array(frames));
  for (let i = 0; i < frames; i++) {
    for (let c = 0; c < type.channels; c++) {
      out[c]![i] = view.getInt16((i * type.channels + c) * 2, type.littleEndian) / 32768;
    }
  }
  return out;
}
