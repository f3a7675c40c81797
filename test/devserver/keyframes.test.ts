// SPDX-License-Identifier: GPL-3.0-or-later
// Key frame starts in RTP payloads, per forwarded codec: forwarding to a new subscriber starts at
// one, so a wrong answer is a subscriber without a picture (never) or with garbage (too early).
import { describe, expect, it } from 'vitest';
import { keyframeStartTest, subscriberCodec } from '../../src/devserver/sfu/forwardedCodecs.js';
import { isH264KeyframeStart } from '../../src/devserver/sfu/h264Keyframe.js';
import { isVp8KeyframeStart } from '../../src/devserver/sfu/vp8Keyframe.js';

/** A NAL unit header byte: nal_ref_idc 3, the given type. */
const nal = (type: number) => 0x60 | type;
const SPS = nal(7);
const PPS = nal(8);
const IDR = nal(5);
const SLICE = nal(1);

/** A STAP-A (RFC 6184 5.7.1) aggregating the given NAL units. */
function stapA(...units: number[][]): Buffer {
  const parts = units.map((u) => Buffer.concat([Buffer.from([0, u.length]), Buffer.from(u)]));
  return Buffer.concat([Buffer.from([nal(24)]), ...parts]);
}

/** An FU-A fragment (RFC 6184 5.8) of a NAL unit of `type`. */
const fuA = (type: number, start: boolean) =>
  Buffer.from([nal(28), (start ? 0x80 : 0) | type, 0xaa, 0xbb]);

describe('H.264 key frame start', () => {
  it('is the packet with the SPS, alone or aggregated with the PPS', () => {
    expect(isH264KeyframeStart(Buffer.from([SPS, 0x42, 0xe0, 0x1f]))).toBe(true);
    expect(isH264KeyframeStart(stapA([SPS, 0x42, 0xe0, 0x1f], [PPS, 0xce, 0x3c]))).toBe(true);
    // An SPS after other units in the same aggregate still starts the key frame.
    expect(isH264KeyframeStart(stapA([nal(6), 0x05], [SPS, 0x42]))).toBe(true);
  });

  it('is not the IDR slice after the parameter sets (they would be lost), nor any other slice', () => {
    expect(isH264KeyframeStart(Buffer.from([IDR, 0x88, 0x80]))).toBe(false);
    expect(isH264KeyframeStart(fuA(5, true))).toBe(false);
    expect(isH264KeyframeStart(fuA(5, false))).toBe(false);
    expect(isH264KeyframeStart(Buffer.from([SLICE, 0x9a]))).toBe(false);
    expect(isH264KeyframeStart(fuA(1, true))).toBe(false);
    expect(isH264KeyframeStart(Buffer.from([PPS, 0xce]))).toBe(false);
    expect(isH264KeyframeStart(stapA([PPS, 0xce], [nal(6), 0x05]))).toBe(false);
  });

  it('reads nothing past a truncated or empty payload', () => {
    expect(isH264KeyframeStart(Buffer.alloc(0))).toBe(false);
    // A STAP-A whose first size runs past the end: the SPS byte is never reached.
    expect(isH264KeyframeStart(Buffer.from([nal(24), 0x00]))).toBe(false);
    expect(isH264KeyframeStart(Buffer.from([nal(24), 0xff, 0xff]))).toBe(false);
  });
});

describe('forwarded codecs', () => {
  it('tests key frames in the codec the track is published in, by MIME type in any case', () => {
    expect(keyframeStartTest('video/H264')).toBe(isH264KeyframeStart);
    expect(keyframeStartTest('video/h264')).toBe(isH264KeyframeStart);
    expect(keyframeStartTest('video/VP8')).toBe(isVp8KeyframeStart);
    expect(keyframeStartTest('audio/opus')).toBeUndefined();
    // A lookup by name, not by property: nothing from Object's prototype.
    expect(keyframeStartTest('constructor')).toBeUndefined();
    expect(keyframeStartTest('__proto__')).toBeUndefined();
  });

  it('offers a subscriber the track codec only, with a payload type fixed per codec', () => {
    expect(subscriberCodec('video/H264')).toMatchObject({
      mimeType: 'video/H264',
      payloadType: 102,
    });
    expect(subscriberCodec('video/h264')?.parameters).toContain('packetization-mode=1');
    expect(subscriberCodec('video/VP8')).toMatchObject({ mimeType: 'video/VP8', payloadType: 96 });
    expect(subscriberCodec('audio/opus')).toMatchObject({ payloadType: 111 });
    expect(subscriberCodec('video/AV1')).toBeUndefined();
  });
});
