// SPDX-License-Identifier: GPL-3.0-or-later
// A subscriber whose connection comes up just after a key frame went by: the dev server sends it
// that key frame and what followed from its copy, instead of asking the publisher for another
// (which libwebrtc encoders ignore within 300 ms of their last key frame). The forwarding path is
// the real one (PublishedTrack -> DownTrack -> a werift track); only the peer connection around
// it is replaced by the two things DownTrack reads from it.
import { TrackInfo, TrackType } from '@livekit/protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  Event,
  MediaStreamTrack,
  RtpHeader,
  RtpPacket,
  type RTCRtpReceiver,
  type RTCRtpTransceiver,
} from 'werift';
import { DownTrack } from '../../src/devserver/sfu/downTrack.js';
import { PublishedTrack } from '../../src/devserver/rtc/publishedTrack.js';
import { RecentKeyframe } from '../../src/devserver/sfu/recentKeyframe.js';

let sequenceNumber = 1_000;

/** A VP8 packet (RFC 7741): the first of a key frame, the first of another frame, or a later one. */
function vp8(kind: 'keyframe' | 'delta' | 'continuation'): RtpPacket {
  const payload =
    kind === 'continuation'
      ? Buffer.from([0x00, 0xaa, 0xbb]) // S = 0: not the start of a frame
      : Buffer.from([0x10, kind === 'keyframe' ? 0x00 : 0x01, 0x9d, 0x01, 0x2a]); // S = 1; P bit
  return new RtpPacket(
    new RtpHeader({ payloadType: 96, sequenceNumber: sequenceNumber++, timestamp: 90_000 }),
    payload,
  );
}

function videoTrack() {
  const published = new PublishedTrack(
    new TrackInfo({ sid: 'TR_video', type: TrackType.VIDEO, mimeType: 'video/VP8' }),
    'cid',
  );
  const source = new MediaStreamTrack({ kind: 'video', remote: true });
  const plis: number[] = [];
  const receiver = { sendRtcpPLI: (ssrc: number) => (plis.push(ssrc), Promise.resolve()) };
  published.attachSources([source], receiver as unknown as RTCRtpReceiver);
  const publish = (rtp: RtpPacket) => source.onReceiveRtp.execute(rtp);
  return { published, publish, plis };
}

/** A subscriber whose connection is up: what DownTrack sends it. */
function subscriber(published: PublishedTrack) {
  const transceiver = {
    sender: { transport: { state: 'connected' }, onRtcp: new Event(), replaceRTP: () => undefined },
  } as unknown as RTCRtpTransceiver;
  const local = new MediaStreamTrack({ kind: 'video' });
  const sent: RtpPacket[] = [];
  local.onReceiveRtp.subscribe((rtp) => sent.push(rtp));
  const downTrack = new DownTrack(published, transceiver, local);
  published.addDownTrack('PA_sub', downTrack);
  return sent;
}

describe('a subscriber that joins just after a key frame', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
  });
  afterEach(() => vi.useRealTimers());

  it('gets that key frame and what followed at once, and the publisher is not asked again', () => {
    const { published, publish, plis } = videoTrack();
    const before = [vp8('keyframe'), vp8('continuation'), vp8('delta'), vp8('continuation')];
    for (const rtp of before) publish(rtp);
    vi.setSystemTime(1_000_120);
    const sent = subscriber(published);
    const next = vp8('delta');
    publish(next);
    // In order, from the key frame's first packet to the one just forwarded.
    expect(sent.map((p) => p.header.sequenceNumber)).toEqual(
      [...before, next].map((p) => p.header.sequenceNumber),
    );
    expect(plis).toEqual([]);
    // Then it is forwarded live like any other.
    publish(vp8('continuation'));
    expect(sent).toHaveLength(6);
  });

  it('waits for a new key frame, asked of the publisher, once the last one is too old', () => {
    const { published, publish, plis } = videoTrack();
    publish(vp8('keyframe'));
    publish(vp8('delta'));
    vi.setSystemTime(1_000_400);
    const sent = subscriber(published);
    publish(vp8('delta'));
    expect(sent).toEqual([]);
    expect(plis).toHaveLength(1);
    const keyframe = vp8('keyframe');
    publish(keyframe);
    expect(sent.map((p) => p.header.sequenceNumber)).toEqual([keyframe.header.sequenceNumber]);
  });
});

describe('RecentKeyframe', () => {
  it('keeps nothing until a key frame, and starts over at each one', () => {
    const recent = new RecentKeyframe();
    recent.add(vp8('delta'), false, 0);
    expect(recent.replay(10)).toEqual([]);
    const first = vp8('keyframe');
    recent.add(first, true, 20);
    recent.add(vp8('delta'), false, 60);
    expect(recent.replay(60)).toHaveLength(2);
    const second = vp8('keyframe');
    recent.add(second, true, 100);
    expect(recent.replay(100)).toEqual([second]);
  });

  it('forgets a key frame 300 ms old, and one followed by more packets than it may hold', () => {
    const recent = new RecentKeyframe();
    recent.add(vp8('keyframe'), true, 0);
    expect(recent.replay(299)).toHaveLength(1);
    expect(recent.replay(300)).toEqual([]);
    recent.add(vp8('keyframe'), true, 1_000);
    for (let i = 0; i < 2_000; i++) recent.add(vp8('continuation'), false, 1_100);
    expect(recent.replay(1_100)).toEqual([]);
  });
});
