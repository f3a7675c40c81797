// SPDX-License-Identifier: GPL-3.0-or-later
import { VideoQuality, type SubscribedQualityUpdate } from '@livekit/protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Dynacast, LIVEKIT_DYNACAST_TIMINGS } from '../../src/devserver/sfu/dynacast.js';

/** What a publisher is told, as LiveKit's dynacast tells it (pkg/rtc/dynacast/). */
describe('dynacast', () => {
  let sent: SubscribedQualityUpdate[];
  const enabled = () => sent.map((u) => u.subscribedQualities.every((q) => q.enabled));
  beforeEach(() => {
    vi.useFakeTimers();
    sent = [];
  });
  afterEach(() => vi.useRealTimers());

  const start = () =>
    new Dynacast('TR_v', 'video/h264', LIVEKIT_DYNACAST_TIMINGS, (u) => sent.push(u));

  it('turns a video nobody subscribes to off 10 s after publishing, every layer', () => {
    start();
    vi.advanceTimersByTime(9_900);
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(200);
    expect(enabled()).toEqual([false]);
    const [update] = sent;
    expect(update!.trackSid).toBe('TR_v');
    expect(update!.subscribedQualities.map((q) => q.quality)).toEqual([
      VideoQuality.LOW,
      VideoQuality.MEDIUM,
      VideoQuality.HIGH,
    ]);
    // Spelled as LiveKit does (pion's MIME type), whatever the case it was given in.
    expect(update!.subscribedCodecs[0]!.codec).toBe('video/H264');
  });

  it('turns it on at once for a subscriber, and off 5 s after the last one left', () => {
    const d = start();
    vi.advanceTimersByTime(10_100);
    d.subscribersChanged(1);
    expect(enabled()).toEqual([false, true]);
    d.subscribersChanged(2);
    d.subscribersChanged(1);
    d.subscribersChanged(0);
    vi.advanceTimersByTime(4_900);
    expect(enabled()).toEqual([false, true]);
    vi.advanceTimersByTime(200);
    expect(enabled()).toEqual([false, true, false]);
  });

  it('says nothing while a subscriber came before the wait, nor after close', () => {
    const d = start();
    d.subscribersChanged(1);
    vi.advanceTimersByTime(20_000);
    expect(sent).toEqual([]);
    d.subscribersChanged(0);
    d.close();
    vi.advanceTimersByTime(20_000);
    expect(sent).toEqual([]);
  });
});
