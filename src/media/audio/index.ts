// SPDX-License-Identifier: GPL-3.0-or-later
export {
  AudioDecodeError,
  AudioTooLongError,
  UnreadableAudioError,
  UnsupportedAudioError,
  type AudioDecodeErrorCode,
} from './audioDecodeError.js';
export {
  sniffAudioFormat,
  type AudioFormat,
  type OggCodec,
  type SniffedFormat,
} from './audioFormat.js';
export { decodeAudio, type DecodeAudioOptions, type DecodedAudio } from './decodeAudio.js';
export { mp4DeclaredDurationMs } from './mp4Duration.js';
export { downmixToMono, fromInt16, toInt16 } from './pcmConversion.js';
export { parseRawPcmType, decodeRawPcm, type RawPcmType } from './rawPcm.js';
export { resample, StreamingResampler } from './resample.js';
export { encodeWav } from './wavFile.js';
