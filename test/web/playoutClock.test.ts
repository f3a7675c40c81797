// SPDX-License-Identifier: GPL-3.0-or-later
// @visage-avatar/web's playout clock: where the sound a page plays is on the sender's clock, from
// the face stream's batches, the receiver's jitter buffer, and playout statistics it can trust.
import { describe, expect, it } from 'vitest';
import { ARRIVAL_DELAY_MS, PlayoutClock } from '../../packages/web/src/index.js';

const NTP = 2_208_988_800_000;

/** An inbound-rtp audio report as Chromium gives it (only the fields the clock reads). */
const report = (fields: Record<string, number>): RTCStatsReport =>
  new Map([['IT01', { type: 'inbound-rtp', kind: 'audio', ...fields }]]) as never;

describe('PlayoutClock', () => {
  it('from batches alone: their arrival less the audio path’s usual delay', () => {
    const clock = new PlayoutClock();
    expect(clock.now(5_000)).toBeUndefined();
    expect(clock.source).toBe('none');
    // Batches written at t arrive 10 ms later (one odd one 300 ms late: the fastest is used).
    clock.arrived(1_000, 1_010);
    clock.arrived(1_200, 1_500);
    clock.arrived(1_400, 1_410);
    expect(clock.now(2_000)).toBe(2_000 - 10 - ARRIVAL_DELAY_MS);
    expect(clock.source).toBe('arrival');
  });

  it('with statistics: the jitter buffer’s recent delay, which follows it when it grows', () => {
    const clock = new PlayoutClock();
    clock.arrived(1_000, 1_010);
    clock.fromStats(report({ jitterBufferDelay: 10, jitterBufferEmittedCount: 100_000 }));
    // 4,800 samples emitted, 480 s of delay summed over them: 100 ms each.
    clock.fromStats(report({ jitterBufferDelay: 490, jitterBufferEmittedCount: 104_800 }));
    expect(clock.jitterMs).toBeCloseTo(100);
    // Beside the jitter buffer, the sender's packets: half a 20 ms packet and Opus's 6.5 ms.
    expect(clock.senderMs).toBeCloseTo(16.5);
    expect(clock.now(2_000)).toBeCloseTo(2_000 - 10 - 100 - 16.5);
    expect(clock.source).toBe('jitter');
    // The buffer grew to a second (after the sender stalled): three reports say so.
    let delay = 490;
    let emitted = 104_800;
    for (let i = 0; i < 3; i++) {
      delay += 4_800;
      emitted += 4_800;
      clock.fromStats(report({ jitterBufferDelay: delay, jitterBufferEmittedCount: emitted }));
    }
    expect(clock.now(2_000)).toBeCloseTo(2_000 - 10 - 1_000 - 16.5);
  });

  it('adds the audio output’s delay where the statistics tell it', () => {
    const clock = new PlayoutClock();
    clock.arrived(1_000, 1_010);
    const stats = (n: number): RTCStatsReport =>
      new Map<string, Record<string, unknown>>([
        [
          'IT01',
          {
            type: 'inbound-rtp',
            kind: 'audio',
            jitterBufferDelay: n * 4_800 * 0.05,
            jitterBufferEmittedCount: n * 4_800,
          },
        ],
        // The device played 4,800 samples each 30 ms after the jitter buffer emitted them.
        [
          'AP01',
          {
            type: 'media-playout',
            kind: 'audio',
            totalPlayoutDelay: n * 4_800 * 0.03,
            totalSamplesCount: n * 4_800,
          },
        ],
      ]) as never;
    clock.fromStats(stats(10));
    clock.fromStats(stats(11));
    expect(clock.jitterMs).toBeCloseTo(50);
    expect(clock.outputMs).toBeCloseTo(30);
    expect(clock.now(2_000)).toBeCloseTo(2_000 - 10 - 50 - 30 - 16.5);
  });

  it('prefers estimatedPlayoutTimestamp where it agrees, and ignores it where it is far off', () => {
    const clock = new PlayoutClock();
    clock.arrived(10_000, 10_010);
    const stats = (estimatedUnixMs: number, at: number) =>
      report({
        jitterBufferDelay: 1,
        jitterBufferEmittedCount: 10_000,
        estimatedPlayoutTimestamp: estimatedUnixMs + NTP,
        timestamp: at,
      });
    // Playing, at local 20,000, what the sender sent at 19,880 (the arrival says 19,930).
    clock.fromStats(stats(19_880, 20_000));
    expect(clock.now(20_000)).toBe(19_880);
    expect(clock.source).toBe('playout');
    // Reports on another clock, a second off: not trusted.
    const far = new PlayoutClock();
    far.arrived(10_000, 10_010);
    far.fromStats(stats(19_000, 20_000));
    expect(far.now(20_000)).toBe(20_000 - 10 - ARRIVAL_DELAY_MS);
    expect(far.source).toBe('arrival');
  });

  it('follows the RTP time of the sound delivered, placed by the statistics, at once when the delay jumps', () => {
    const clock = new PlayoutClock();
    clock.arrived(1_000, 1_010);
    // The jitter buffer holds its samples 50 ms, report after report.
    let delay = 0;
    let emitted = 0;
    const jitterFor = (ms: number) => {
      delay += (4_800 * ms) / 1000;
      emitted += 4_800;
      clock.fromStats(report({ jitterBufferDelay: delay, jitterBufferEmittedCount: emitted }));
    };
    for (let i = 0; i < 4; i++) jitterFor(50);
    // The statistics: the sound heard at local L was sent at L - 10 - 50 - 16.5.
    expect(clock.now(2_000)).toBeCloseTo(2_000 - 76.5);
    // The sender's RTP clock runs 5 s ahead of its Unix ms and wraps at 2^32 on the way.
    const rtpOf = (senderMs: number) => ((senderMs + 5_000) * 48 + 2 ** 32 - 48_000) % 2 ** 32;
    const deliver = (local: number, delayMs: number, source = 7) =>
      clock.fromSources(
        [{ source, rtpTimestamp: rtpOf(local - delayMs), timestamp: local }],
        local,
      );
    for (let local = 2_000; local < 2_400; local += 100) deliver(local, 76.5);
    expect(clock.source).toBe('jitter'); // four readings: not yet placed
    deliver(2_400, 76.5);
    expect(clock.now(2_450)).toBeCloseTo(2_450 - 76.5);
    expect(clock.source).toBe('rtp');
    // The sender stalled: the frames delivered now were sent 300 ms earlier. The statistics do not
    // tell it yet; the RTP clock follows at once, across the wrap.
    for (let local = 2_500; local < 3_000; local += 100) deliver(local, 376.5);
    expect(clock.now(3_000)).toBeCloseTo(3_000 - 376.5);
    expect(clock.jitterMs).toBeCloseTo(50);
    // While the statistics catch up (the buffer's delay moving), they do not move the RTP clock.
    const placed = clock.rtpOffsetMs;
    for (const ms of [150, 250, 350]) {
      jitterFor(ms);
      deliver(3_000 + ms, 376.5);
    }
    expect(clock.rtpOffsetMs).toBe(placed);
    expect(clock.now(3_400)).toBeCloseTo(3_400 - 376.5);
    // Another audio source (republished): its RTP clock is placed anew.
    deliver(3_500, 376.5, 8);
    expect(clock.rtpOffsetMs).toBeUndefined();
    expect(clock.now(3_500)).toBeCloseTo(3_500 - 10 - 250 - 16.5); // the statistics' median of 3
  });
});
