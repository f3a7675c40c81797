// SPDX-License-Identifier: Apache-2.0

/** NTP's epoch (1900) to Unix's (1970), ms. */
const NTP_TO_UNIX_MS = 2_208_988_800_000;
/**
 * Before the statistics tell how long the receiver's jitter buffer holds the sound: the audio
 * path's delay after a line's arrival (about 60 ms on one machine through the embedded server).
 */
export const ARRIVAL_DELAY_MS = 60;
/** Samples (48 kHz) between two reports for a delay per sample to be measured (jitter buffer, output). */
const MIN_SAMPLES = 2_400;
/** Playout estimates, and delays per sample, kept; their median is used. */
const KEPT_PLAYOUT = 7;
const KEPT_DELAYS = 3;
/**
 * The playout statistics are used only within this of the arrival's estimate, ms: a sender report
 * was seen 0.4 to 0.9 s behind the page's clock on the same machine (the embedded server's).
 */
const PLAYOUT_TRUST_MS = 250;
/** Batches whose arrival is kept (about 10 s of the stream while it speaks, 5 batches a second). */
const KEPT_ARRIVALS = 50;
/**
 * Which of them stands for the transit: the upper quartile, the fast ones. A batch held up in the
 * sender or the network (a loaded machine: up to 400 ms) says nothing of the sound's path; a few
 * come early (the first of a new stream: times sent again, up to five ticks ahead).
 */
const ARRIVAL_QUANTILE = 0.75;
/**
 * The audio packets' duration, ms: Opus as WebRTC sends it. (The statistics do not tell it: samples
 * received over packets received counts concealment too, and read 22 to 100 ms.)
 */
const PACKET_MS = 20;
/**
 * Opus's algorithmic delay beyond its frame, ms (RFC 6716: the encoder's 2.5 ms look-ahead and the
 * decoder's 4 ms overlap): a sample plays that much later than its frame's timing says.
 */
const OPUS_DELAY_MS = 6.5;
/** The audio's RTP clock: Opus in WebRTC counts 48 kHz samples. */
const RTP_PER_MS = 48;
/**
 * Offsets of the RTP clock from the statistics' estimate kept (10 s of polls at 100 ms), taken
 * while the jitter buffer holds still: their median places the RTP clock on the sender's. The
 * statistics' estimate lags a jump of the receiver's delay by a few polls and swings in its wake;
 * the RTP time does neither.
 */
const KEPT_RTP_OFFSETS = 100;
/** Offsets needed before the RTP clock is used (half a second of polls). */
const MIN_RTP_OFFSETS = 5;
/** The jitter buffer holds still while its last delays agree within this, ms. */
const STEADY_MS = 20;

/**
 * Where the sound the page plays is, on the sender's clock (the face stream's `t`, Unix ms).
 *
 * Preferably from the audio receiver's `estimatedPlayoutTimestamp` (inbound-rtp statistics: the
 * sender's NTP time of the audio playing now, mapped through its RTCP sender reports). Chromium
 * reports it only once it knows the round trip to the sender, which a receive-only participant
 * behind an SFU may never learn (in the embedded server's rooms: never).
 *
 * Otherwise from the parts of the audio's path that the page can measure. The transit: each batch of
 * `face` lines is written shortly before its first line is due (the sender writes the next ticks
 * ahead), so when it was written minus when it arrived is the clocks' offset less the transit: the
 * upper quartile of the last 50 batches (their median of 15 was pulled by the late ones). Then,
 * from the receiver's statistics, what the sound does that the lines do not:
 * - the sender's packets: a sample leaves with the rest of its packet (20 ms of Opus), on average
 *   half a packet after its time, and Opus delays it by 6.5 ms more (`jitterBufferDelay` counts a
 *   packet's samples from its arrival, so the later ones wait longer in it: that is the same half);
 * - the jitter buffer: how long the samples it emitted lately waited in it (the change of
 *   `jitterBufferDelay` over that of `jitterBufferEmittedCount` between two reports);
 * - the audio output: how long the samples it played lately took from the jitter buffer to the
 *   device (`media-playout`: the change of `totalPlayoutDelay` over that of `totalSamplesCount`;
 *   30 ms in headless Chromium; not reported by every browser: then 0).
 * Before any report tells the jitter buffer's delay, `ARRIVAL_DELAY_MS` stands for all of them.
 */
export class PlayoutClock {
  /** sender ms - local Unix ms, from playout statistics. */
  private readonly playout: number[] = [];
  /** sender ms - local Unix ms of batches' arrivals. */
  private readonly arrivals: number[] = [];
  /** The jitter buffer's recent delays (`jitterBufferDelay` over `jitterBufferEmittedCount`). */
  private readonly jitter = new DelayPerSample();
  /** The audio output's recent delays (`totalPlayoutDelay` over `totalSamplesCount`). */
  private readonly output = new DelayPerSample();
  /** The audio receiver's latest frame delivered: its RTP time (ms, unwrapped) and when (local Unix ms). */
  private delivered: { source: number; rtp: number; rtpMs: number; at: number } | undefined;
  /** RTP ms - the statistics' estimate, at each reading of the synchronization sources. */
  private readonly rtpOffsets: number[] = [];
  /** Their median once there are enough (read at every frame; changes only at a poll). */
  private rtpOffset: number | undefined;

  constructor(private readonly arrivalDelayMs = ARRIVAL_DELAY_MS) {}

  /** Which estimate `now` uses. */
  get source(): ClockSource {
    return this.estimate(localNow()).source;
  }

  /** The jitter buffer's delay in use, ms (undefined before the statistics tell it). */
  get jitterMs(): number | undefined {
    return median(this.jitter.recentMs);
  }

  /** The audio output's delay in use, ms (0 where the browser does not report it). */
  get outputMs(): number {
    return median(this.output.recentMs) ?? 0;
  }

  /** The sender's packetization and codec delay in use, ms. */
  get senderMs(): number {
    return PACKET_MS / 2 + OPUS_DELAY_MS;
  }

  /** The clocks' offset less the transit, ms (undefined before a batch arrived). */
  get arrivalOffsetMs(): number | undefined {
    if (this.arrivals.length === 0) return undefined;
    const sorted = [...this.arrivals].sort((a, b) => a - b);
    return sorted[Math.floor((sorted.length - 1) * ARRIVAL_QUANTILE)];
  }

  /** Where the RTP clock stands from the sender's (ms; undefined until it is placed). */
  get rtpOffsetMs(): number | undefined {
    return this.rtpOffset;
  }

  /** A batch written at sender time `t` arrived now. */
  arrived(t: number, localUnixMs = localNow()): void {
    this.arrivals.push(t - localUnixMs);
    if (this.arrivals.length > KEPT_ARRIVALS) this.arrivals.shift();
  }

  /** Forgets the batches' arrivals (a new stream: maybe another sender). */
  resetArrivals(): void {
    this.arrivals.length = 0;
  }

  /**
   * Reads an audio receiver's synchronization sources (`getSynchronizationSources()`): the RTP
   * time of the last audio frame it delivered, and when. Read after `fromStats` at each poll.
   */
  fromSources(
    sources: readonly { source: number; rtpTimestamp: number; timestamp: number }[],
    localUnixMs = localNow(),
  ): void {
    const s = sources[0];
    if (!s || !Number.isFinite(s.rtpTimestamp) || !Number.isFinite(s.timestamp)) return;
    const last = this.delivered;
    if (last && last.source !== s.source) this.resetSources();
    if (last?.source === s.source && last.at === s.timestamp) return;
    // RTP times wrap at 2^32 (a day at 48 kHz): the step since the last one, as a signed 32-bit count.
    const step = last?.source === s.source ? (s.rtpTimestamp - last.rtp) << 0 : 0;
    const rtpMs =
      last?.source === s.source ? last.rtpMs + step / RTP_PER_MS : s.rtpTimestamp / RTP_PER_MS;
    this.delivered = { source: s.source, rtp: s.rtpTimestamp, rtpMs, at: s.timestamp };
    // Placed only while the jitter buffer holds still: in a jump's wake the statistics lag it.
    if (!this.jitter.steady) return;
    const stats = this.fromStatistics(localUnixMs).ms;
    const heard = this.heardRtpMs(localUnixMs);
    if (stats === undefined || heard === undefined) return;
    this.rtpOffsets.push(heard - stats);
    if (this.rtpOffsets.length > KEPT_RTP_OFFSETS) this.rtpOffsets.shift();
    if (this.rtpOffsets.length >= MIN_RTP_OFFSETS) this.rtpOffset = median(this.rtpOffsets);
  }

  /** Forgets the RTP clock (a new stream or audio source: maybe another sender). */
  resetSources(): void {
    this.delivered = undefined;
    this.rtpOffsets.length = 0;
    this.rtpOffset = undefined;
  }

  /** Reads an audio receiver's statistics. */
  fromStats(report: RTCStatsReport): void {
    report.forEach((s: Record<string, unknown>) => {
      if (s.type === 'media-playout' && s.kind !== 'video') {
        this.output.read(Number(s.totalPlayoutDelay), Number(s.totalSamplesCount));
      }
      if (s.type !== 'inbound-rtp' || s.kind !== 'audio') return;
      this.jitter.read(Number(s.jitterBufferDelay), Number(s.jitterBufferEmittedCount));
      const estimated = Number(s.estimatedPlayoutTimestamp);
      const at = Number(s.timestamp);
      if (!(estimated > NTP_TO_UNIX_MS) || !Number.isFinite(at)) return;
      this.playout.push(estimated - NTP_TO_UNIX_MS - at);
      if (this.playout.length > KEPT_PLAYOUT) this.playout.shift();
    });
  }

  /** The sender time of the sound playing now, or undefined before any estimate. */
  now(localUnixMs = localNow()): number | undefined {
    return this.estimate(localUnixMs).ms;
  }

  /**
   * The RTP time of the sound heard at `localUnixMs`: the frame delivered last, the time since,
   * less the audio output's delay (the frame delivered now is heard that much later).
   */
  private heardRtpMs(localUnixMs: number): number | undefined {
    const d = this.delivered;
    return d && d.rtpMs + (localUnixMs - d.at) - this.outputMs;
  }

  private estimate(localUnixMs: number): { ms: number | undefined; source: ClockSource } {
    const fromStatistics = this.fromStatistics(localUnixMs);
    if (fromStatistics.source === 'playout') return fromStatistics;
    const offset = this.rtpOffsetMs;
    const heard = this.heardRtpMs(localUnixMs);
    if (offset === undefined || heard === undefined) return fromStatistics;
    return { ms: heard - offset, source: 'rtp' };
  }

  private fromStatistics(localUnixMs: number): {
    ms: number | undefined;
    source: Exclude<ClockSource, 'rtp'>;
  } {
    const arrival = this.arrivalOffsetMs;
    const jitter = this.jitterMs;
    const path =
      jitter === undefined ? this.arrivalDelayMs : this.senderMs + jitter + this.outputMs;
    const fallback = arrival === undefined ? undefined : localUnixMs + arrival - path;
    const playout = median(this.playout);
    // Sender reports an SFU rewrote on another clock would put the face seconds off: trusted only
    // where they agree with the arrival and the jitter buffer.
    if (
      playout !== undefined &&
      (fallback === undefined || Math.abs(localUnixMs + playout - fallback) <= PLAYOUT_TRUST_MS)
    ) {
      return { ms: localUnixMs + playout, source: 'playout' };
    }
    if (fallback === undefined) return { ms: undefined, source: 'none' };
    return { ms: fallback, source: jitter === undefined ? 'arrival' : 'jitter' };
  }
}

/** Which estimate the clock uses (see `PlayoutClock`). */
export type ClockSource = 'playout' | 'rtp' | 'jitter' | 'arrival' | 'none';

/**
 * A delay that WebRTC's statistics report as two running totals (seconds of delay, samples): the
 * delay per sample between two reports, ms, the last few kept.
 */
class DelayPerSample {
  readonly recentMs: number[] = [];
  private last: { delay: number; samples: number } | undefined;

  /** The last few delays agree within `STEADY_MS`. */
  get steady(): boolean {
    const xs = this.recentMs;
    return xs.length === KEPT_DELAYS && Math.max(...xs) - Math.min(...xs) <= STEADY_MS;
  }

  read(delaySeconds: number, samples: number): void {
    if (!Number.isFinite(delaySeconds) || !Number.isFinite(samples)) return;
    const last = this.last;
    if (last && samples - last.samples < MIN_SAMPLES && samples >= last.samples) return;
    this.last = { delay: delaySeconds, samples };
    if (!last || samples <= last.samples) return;
    this.recentMs.push(((delaySeconds - last.delay) / (samples - last.samples)) * 1000);
    if (this.recentMs.length > KEPT_DELAYS) this.recentMs.shift();
  }
}

function median(xs: readonly number[]): number | undefined {
  if (xs.length === 0) return undefined;
  return [...xs].sort((a, b) => a - b)[xs.length >> 1];
}

/** Unix ms on the page's monotonic clock (what statistics' `timestamp` is on). */
export const localNow = () => performance.timeOrigin + performance.now();
