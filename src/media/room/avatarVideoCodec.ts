// SPDX-License-Identifier: GPL-3.0-or-later
import { VideoCodec } from '@livekit/rtc-node';

/** The codecs an avatar's video can be published in. */
export const AVATAR_VIDEO_CODECS = ['h264', 'vp8'] as const;
export type AvatarVideoCodec = (typeof AVATAR_VIDEO_CODECS)[number];

/**
 * H.264 by default: libwebrtc's OpenH264 encoder thread took 0.021 core per 512x512 25 fps avatar
 * where VP8's took 0.052 (six speaking sessions on 2 media processes; docs/decisions.md, H.264 by default), at less
 * than half the bitrate for the same picture, and browsers decode it (often in hardware). VP8 for
 * viewers whose browser has no H.264 (a Firefox without its OpenH264 plugin).
 */
export const DEFAULT_AVATAR_VIDEO_CODEC: AvatarVideoCodec = 'h264';

/** rtc-node's name for it, for TrackPublishOptions. */
export function rtcVideoCodec(codec: AvatarVideoCodec): VideoCodec {
  return codec === 'h264' ? VideoCodec.H264 : VideoCodec.VP8;
}
