// SPDX-License-Identifier: GPL-3.0-or-later
import { UnreadableAudioError } from './audioDecodeError.js';
import type { SniffedFormat } from './audioFormat.js';

/** What a container header says about its audio, read before any decoder runs. */
export interface AudioHeader {
  channels: number;
  sampleRate: number;
  /** Duration implied by the declared data size, when the header gives one (WAV). */
  durationMs?: number;
}

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + length));
}

/**
 * WAV: the `fmt ` chunk (channels, rate, bits) and the `data` chunk's declared size. The
 * duration is taken from the smaller of the declared and the present data, since a header may
 * declare gigabytes that never come.
 */
function readWavHeader(bytes: Uint8Array): AudioHeader {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let fmt: { channels: number; sampleRate: number; bits: number } | undefined;
  for (let offset = 12; offset + 8 <= bytes.length;) {
    const id = ascii(bytes, offset, 4);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (body + 16 > bytes.length) break;
      fmt = {
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        bits: view.getUint16(body + 14, true),
      };
    } else if (id === 'data') {
      if (!fmt) break;
      const frameBytes = fmt.channels * Math.max(1, Math.ceil(fmt.bits / 8));
      const present = Math.min(size, bytes.length - body);
      const frames = frameBytes > 0 ? present / frameBytes : 0;
      return {
        channels: fmt.channels,
        sampleRate: fmt.sampleRate,
        durationMs: fmt.sampleRate > 0 ? (frames / fmt.sampleRate) * 1000 : 0,
      };
    }
    offset = body + size + (size % 2); // chunks are padded to an even size
  }
  if (fmt) return { channels: fmt.channels, sampleRate: fmt.sampleRate };
  throw new UnreadableAudioError('wav audio has no readable fmt chunk');
}

/** Ogg: the identification header of the first page (Opus or Vorbis; Ogg FLAC is checked later). */
function readOggHeader(bytes: Uint8Array, sniffed: SniffedFormat): AudioHeader | undefined {
  const packet = 27 + bytes[26]!;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (sniffed.oggCodec === 'opus' && packet + 16 <= bytes.length) {
    // OpusHead: version, channel count, pre-skip, input rate (Opus always decodes at 48 kHz).
    return { channels: bytes[packet + 9]!, sampleRate: 48_000 };
  }
  if (sniffed.oggCodec === 'vorbis' && packet + 16 <= bytes.length) {
    return { channels: bytes[packet + 11]!, sampleRate: view.getUint32(packet + 12, true) };
  }
  return undefined;
}

/**
 * The channel count and rate a file declares, where its header states them (WAV, Ogg Opus and
 * Vorbis); undefined for formats whose decoders report them only as they decode (their first
 * output is checked instead, before more is kept).
 */
export function readAudioHeader(
  bytes: Uint8Array,
  sniffed: SniffedFormat,
): AudioHeader | undefined {
  if (sniffed.format === 'wav') return readWavHeader(bytes);
  if (sniffed.format === 'ogg') return readOggHeader(bytes, sniffed);
  return undefined;
}
