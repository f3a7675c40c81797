// SPDX-License-Identifier: GPL-3.0-or-later
import { VideoCodec } from '@livekit/rtc-node';
import { describe, expect, it } from 'vitest';
import { rtcVideoCodec } from '../../../src/media/room/avatarVideoCodec.js';

describe('the avatars video codec', () => {
  it("maps to rtc-node's codec", () => {
    expect(rtcVideoCodec('h264')).toBe(VideoCodec.H264);
    expect(rtcVideoCodec('vp8')).toBe(VideoCodec.VP8);
  });
});
