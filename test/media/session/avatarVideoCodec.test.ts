import { VideoCodec } from '@livekit/rtc-node';
import { describe, expect, it } from 'vitest';
import {
  avatarVideoCodecFromEnv,
  rtcVideoCodec,
} from '../../../src/media/session/avatarVideoCodec.js';

describe('the avatars video codec setting', () => {
  it('is H.264 unless VISAGE_VIDEO_CODEC names VP8 (any case, spaces around)', () => {
    expect(avatarVideoCodecFromEnv({})).toBe('h264');
    expect(avatarVideoCodecFromEnv({ VISAGE_VIDEO_CODEC: '' })).toBe('h264');
    expect(avatarVideoCodecFromEnv({ VISAGE_VIDEO_CODEC: ' VP8 ' })).toBe('vp8');
    expect(avatarVideoCodecFromEnv({ VISAGE_VIDEO_CODEC: 'H264' })).toBe('h264');
    expect(rtcVideoCodec('h264')).toBe(VideoCodec.H264);
    expect(rtcVideoCodec('vp8')).toBe(VideoCodec.VP8);
  });

  it('refuses anything else, naming the choices', () => {
    expect(() => avatarVideoCodecFromEnv({ VISAGE_VIDEO_CODEC: 'av1' })).toThrow(
      'VISAGE_VIDEO_CODEC must be one of h264, vp8 (got "av1")',
    );
    expect(() => avatarVideoCodecFromEnv({ VISAGE_VIDEO_CODEC: 'h.264' })).toThrow(/h264, vp8/);
  });
});
