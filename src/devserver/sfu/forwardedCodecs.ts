// SPDX-License-Identifier: GPL-3.0-or-later
import { RTCRtpCodecParameters, useFIR, useNACK, usePLI, useREMB } from 'werift';
import { isH264KeyframeStart } from './h264Keyframe.js';
import { isVp8KeyframeStart } from './vp8Keyframe.js';

/**
 * The codecs the SFU forwards. It forwards RTP untouched (but for the payload type, which each
 * connection's sender sets), so publishers and subscribers must agree on exactly these: Opus (RED
 * stays off, werift cannot forward it), VP8 (the SDKs' default video codec) and H.264 (what
 * Visage's avatars publish by default: a third of VP8's encoding cost). A track is forwarded in
 * the codec its publisher chose; each subscriber is offered only that one for it.
 *
 * Payload types are fixed, so that the m-sections bundled on one subscriber connection never give
 * one number to two codecs. H.264 is offered as constrained baseline in packetization mode 1,
 * which every WebRTC decoder takes.
 */
const OPUS = {
  mimeType: 'audio/opus',
  clockRate: 48000,
  channels: 2,
  payloadType: 111,
  parameters: 'minptime=10;useinbandfec=1',
};
const VIDEO_FEEDBACK = () => [useNACK(), usePLI(), useFIR(), useREMB()];
const VP8 = { mimeType: 'video/VP8', clockRate: 90000, payloadType: 96 };
const H264 = {
  mimeType: 'video/H264',
  clockRate: 90000,
  payloadType: 102,
  parameters: 'level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f',
};

/** Whether an RTP payload starts a key frame, per forwarded video codec (lower-case MIME type). */
const KEYFRAME_START = new Map<string, (payload: Buffer) => boolean>([
  ['video/vp8', isVp8KeyframeStart],
  ['video/h264', isH264KeyframeStart],
]);

/** Fresh codec parameters (werift keeps and may change what it is given) for a peer connection. */
export function forwardedCodecs(): {
  audio: RTCRtpCodecParameters[];
  video: RTCRtpCodecParameters[];
} {
  return {
    audio: [new RTCRtpCodecParameters(OPUS)],
    video: [
      new RTCRtpCodecParameters({ ...VP8, rtcpFeedback: VIDEO_FEEDBACK() }),
      new RTCRtpCodecParameters({ ...H264, rtcpFeedback: VIDEO_FEEDBACK() }),
    ],
  };
}

/** The one codec a subscriber is offered for a track published in `mimeType`. */
export function subscriberCodec(mimeType: string): RTCRtpCodecParameters | undefined {
  const wanted = mimeType.toLowerCase();
  const { audio, video } = forwardedCodecs();
  return [...audio, ...video].find((codec) => codec.mimeType.toLowerCase() === wanted);
}

/** The key frame test of a forwarded video codec; undefined for audio (and unknown codecs). */
export function keyframeStartTest(mimeType: string): ((payload: Buffer) => boolean) | undefined {
  return KEYFRAME_START.get(mimeType.toLowerCase());
}
