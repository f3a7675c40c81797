// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Container/codec sniffing from magic bytes. The file name and the declared Content-Type are not
 * trusted for compressed formats: uploads are routinely mislabelled, and the decoder must be the
 * one that matches the bytes.
 */
export type AudioFormat = 'wav' | 'mp3' | 'ogg' | 'webm' | 'm4a' | 'flac' | 'pcm';

/** The codec inside an Ogg stream decides which decoder runs. */
export type OggCodec = 'opus' | 'vorbis' | 'flac';

export interface SniffedFormat {
  format: Exclude<AudioFormat, 'pcm'>;
  /** Set for `ogg` only. */
  oggCodec?: OggCodec;
}

function ascii(bytes: Uint8Array, offset: number, text: string): boolean {
  if (offset + text.length > bytes.length) return false;
  for (let i = 0; i < text.length; i++) {
    if (bytes[offset + i] !== text.charCodeAt(i)) return false;
  }
  return true;
}

/** Length of a leading ID3v2 tag (header + body + optional footer), 0 when there is none. */
function id3v2Length(bytes: Uint8Array): number {
  if (bytes.length < 10 || !ascii(bytes, 0, 'ID3')) return 0;
  const size =
    ((bytes[6]! & 0x7f) << 21) |
    ((bytes[7]! & 0x7f) << 14) |
    ((bytes[8]! & 0x7f) << 7) |
    (bytes[9]! & 0x7f);
  const footer = bytes[5]! & 0x10 ? 10 : 0;
  return 10 + size + footer;
}

/** MPEG audio frame sync with a valid layer (layer 00 is reserved; it is how ADTS AAC starts). */
function isMpegFrameSync(bytes: Uint8Array, offset: number): boolean {
  if (offset + 4 > bytes.length) return false;
  const b1 = bytes[offset + 1]!;
  const b2 = bytes[offset + 2]!;
  return (
    bytes[offset] === 0xff &&
    (b1 & 0xe0) === 0xe0 &&
    (b1 & 0x06) !== 0 && // layer
    (b1 & 0x18) !== 0x08 && // version 01 is reserved
    (b2 & 0xf0) !== 0xf0 && // bitrate index 1111 is invalid
    (b2 & 0x0c) !== 0x0c // sample-rate index 11 is reserved
  );
}

function sniffOggCodec(bytes: Uint8Array): OggCodec | undefined {
  // The first page carries exactly the codec identification packet, right after the 27-byte page
  // header and its segment table.
  if (bytes.length < 28) return undefined;
  const packet = 27 + bytes[26]!;
  if (ascii(bytes, packet, 'OpusHead')) return 'opus';
  if (bytes[packet] === 0x01 && ascii(bytes, packet + 1, 'vorbis')) return 'vorbis';
  if (bytes[packet] === 0x7f && ascii(bytes, packet + 1, 'FLAC')) return 'flac';
  return undefined;
}

/**
 * Identify the audio container from its first bytes. Returns undefined for anything that is not
 * one of the supported formats (the caller answers 415 unsupported_audio).
 */
export function sniffAudioFormat(bytes: Uint8Array): SniffedFormat | undefined {
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WAVE')) return { format: 'wav' };
  // RF64 is the >4 GiB WAV variant; rejected rather than half-supported.
  if (ascii(bytes, 0, 'fLaC')) return { format: 'flac' };
  if (ascii(bytes, 0, 'OggS')) {
    const oggCodec = sniffOggCodec(bytes);
    return oggCodec ? { format: 'ogg', oggCodec } : undefined;
  }
  // EBML magic: WebM and Matroska share it; the WebM demuxer reads both.
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) {
    return { format: 'webm' };
  }
  // ISO base media (MP4/M4A): a box of type `ftyp` first.
  if (ascii(bytes, 4, 'ftyp')) return { format: 'm4a' };
  const id3 = id3v2Length(bytes);
  if (id3 > 0) {
    // ID3 also prefixes FLAC occasionally; otherwise it is MP3 (trust the tag when it runs past
    // the bytes we have rather than refusing the file).
    if (ascii(bytes, id3, 'fLaC')) return { format: 'flac' };
    if (id3 >= bytes.length - 4 || isMpegFrameSync(bytes, id3)) return { format: 'mp3' };
    return undefined;
  }
  if (isMpegFrameSync(bytes, 0)) return { format: 'mp3' };
  return undefined;
}
