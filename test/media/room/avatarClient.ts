// SPDX-License-Identifier: GPL-3.0-or-later
// A LiveKit participant that joins a Visage session's room with the participant token (as a
// frontend would) and records what the avatar sends: video frames with their mouth opening,
// audio, and lk.chat messages.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AudioStream,
  Room,
  RoomEvent,
  TrackKind,
  VideoStream,
  type RemoteParticipant,
  type RemoteTrack,
  type RemoteTrackPublication,
} from '@livekit/rtc-node';
import {
  FRAME_HEIGHT,
  FRAME_WIDTH,
  MOUTH_REGION,
  measureMouthOpening,
  type Rect,
} from '../../../src/media/render/index.js';
import type { ChatMessage } from '@visage-avatar/client/api';

export interface VideoSample {
  /** When the test process got the frame (its own clock, ms since the client was made). */
  atMs: number;
  /** The frame's render time as the receiver's jitter buffer set it (libwebrtc's clock, ms). */
  renderMs: number;
  width: number;
  height: number;
  mouth: number;
  checksum: number;
}

export interface AudioSample {
  /** When the test process got the chunk (its own clock, ms since the client was made). */
  atMs: number;
  /** Where the chunk starts on the received audio's own timeline (samples before it), ms. */
  playoutMs: number;
  rms: number;
  samples: Int16Array;
  sampleRate: number;
}

export class AvatarClient {
  readonly room = new Room();
  readonly video: VideoSample[] = [];
  readonly audio: AudioSample[] = [];
  readonly chat: (ChatMessage & { atMs: number })[] = [];
  readonly left: string[] = [];
  /** lk.transcription text streams: segment id, final flag and the text. */
  readonly transcriptions: { segment: string; final: boolean; text: string }[] = [];
  readonly t0 = performance.now();
  /** The avatar video's codec, as the server announced it (`video/H264`, `video/VP8`). */
  videoMimeType: string | undefined;
  private subscribed = new Set<string>();
  /** Where the mouth is measured in received frames (a photo avatar's own region). */
  private readonly mouthRegion: Rect;

  /** Whether each decoded frame and audio chunk is read into this process (`video`, `audio`). */
  private readonly streams: boolean;

  /**
   * `streams: false` is a viewer that only receives: rtc-node still decodes the video and plays
   * out the audio, as a browser would, but nothing is copied into JavaScript; what arrived is in
   * `receivedStats()`. The bench's density runs use it, so that the viewers' share of the one
   * machine is what a viewer costs, not what analysing every frame costs.
   */
  constructor(options: { mouthRegion?: Rect; streams?: boolean } = {}) {
    this.mouthRegion = options.mouthRegion ?? MOUTH_REGION;
    this.streams = options.streams ?? true;
  }

  now(): number {
    return performance.now() - this.t0;
  }

  async join(url: string, token: string): Promise<void> {
    const mouthRegion = this.mouthRegion;
    this.room.on(RoomEvent.TrackSubscribed, (track: RemoteTrack, pub: RemoteTrackPublication) => {
      this.subscribed.add(track.kind === TrackKind.KIND_VIDEO ? 'video' : 'audio');
      if (track.kind === TrackKind.KIND_VIDEO) this.videoMimeType = pub.mimeType;
      if (!this.streams) return;
      if (track.kind === TrackKind.KIND_VIDEO) {
        const stream = new VideoStream(track);
        (async () => {
          for await (const ev of stream) {
            const f = ev.frame;
            const i420 = f.type === 5 ? f : f.convert(5);
            const data = i420.data;
            let checksum = 0;
            for (let i = 0; i < data.length; i += 997) checksum = (checksum * 31 + data[i]!) >>> 0;
            this.video.push({
              atMs: this.now(),
              renderMs: Number(ev.timestampUs) / 1000,
              width: f.width,
              height: f.height,
              mouth:
                f.width === FRAME_WIDTH && f.height === FRAME_HEIGHT
                  ? measureMouthOpening(data, f.width, f.height, mouthRegion)
                  : NaN,
              checksum,
            });
          }
        })().catch(() => undefined); // the stream errors when the room disconnects
      } else {
        const stream = new AudioStream(track, { sampleRate: 48_000, numChannels: 1 });
        let samplesBefore = 0;
        (async () => {
          for await (const frame of stream) {
            const samples = new Int16Array(frame.data);
            let sum = 0;
            for (const s of samples) sum += s * s;
            this.audio.push({
              atMs: this.now(),
              playoutMs: (samplesBefore / frame.sampleRate) * 1000,
              rms: Math.sqrt(sum / Math.max(1, samples.length)),
              samples,
              sampleRate: frame.sampleRate,
            });
            samplesBefore += samples.length;
          }
        })().catch(() => undefined); // the stream errors when the room disconnects
      }
    });
    this.room.on(RoomEvent.DataReceived, (payload, _p, _kind, topic) => {
      if (topic !== 'lk.chat') return;
      this.chat.push({
        ...(JSON.parse(new TextDecoder().decode(payload)) as ChatMessage),
        atMs: this.now(),
      });
    });
    this.room.registerTextStreamHandler('lk.transcription', (reader) => {
      const attributes = reader.info.attributes ?? {};
      reader
        .readAll()
        .then((text) =>
          this.transcriptions.push({
            segment: attributes['lk.segment_id'] ?? '',
            final: attributes['lk.transcription_final'] === 'true',
            text,
          }),
        )
        // A stream cut by leaving the room is expected at the end of a test.
        .catch(() => undefined);
    });
    this.room.on(RoomEvent.ParticipantDisconnected, (p: RemoteParticipant) =>
      this.left.push(p.identity),
    );
    await this.room.connect(url, token, { autoSubscribe: true, dynacast: false });
  }

  async waitFor(what: () => boolean, timeoutMs = 10_000, label = 'condition'): Promise<void> {
    const until = performance.now() + timeoutMs;
    while (!what()) {
      if (performance.now() > until) throw new Error(`timed out waiting for ${label}`);
      await sleep(20);
    }
  }

  /**
   * Waits until the receiver's audio delay holds still: the mean time a sample spent in its
   * jitter buffer (libwebrtc's NetEq), over each second, within `toleranceMs` of the second
   * before, two seconds running (a buffer shrinking by 5 to 10 ms a second, as after a load
   * spike, does not pass), or `maxMs` at most. Returns the last mean delay and the time waited.
   */
  async waitForSteadyAudioDelay({ toleranceMs = 4, maxMs = 20_000 } = {}): Promise<{
    delayMs: number | undefined;
    waitedMs: number;
  }> {
    const started = performance.now();
    let totals = await this.audioJitterBuffer();
    let last: number | undefined;
    let steadySteps = 0;
    while (performance.now() - started < maxMs) {
      await sleep(1_000);
      const next = await this.audioJitterBuffer();
      const mean = meanJitterBufferMs(totals, next);
      totals = next;
      const steady =
        mean !== undefined && last !== undefined && Math.abs(mean - last) <= toleranceMs;
      steadySteps = steady ? steadySteps + 1 : 0;
      last = mean;
      if (steadySteps >= 2) return { delayMs: mean, waitedMs: performance.now() - started };
    }
    return { delayMs: last, waitedMs: performance.now() - started };
  }

  /** What the received audio's jitter buffer (libwebrtc's NetEq) has delayed so far. */
  async audioJitterBuffer(): Promise<JitterBufferTotals | undefined> {
    const stats = await this.room.getRtcStats();
    for (const s of stats.subscriberStats) {
      if (s.stats.case !== 'inboundRtp' || s.stats.value.stream?.kind !== 'audio') continue;
      const inbound = s.stats.value.inbound;
      return {
        delayS: inbound?.jitterBufferDelay ?? 0,
        emitted: Number(inbound?.jitterBufferEmittedCount ?? 0),
      };
    }
    return undefined;
  }

  /** What the receiver has decoded and played out so far (libwebrtc's inbound RTP stats). */
  async receivedStats(): Promise<ReceivedStats> {
    const totals: ReceivedStats = {
      atUs: 0,
      framesDecoded: 0,
      freezes: 0,
      audioSamples: 0,
      concealedSamples: 0,
      audioPackets: 0,
    };
    for (const s of (await this.room.getRtcStats()).subscriberStats) {
      if (s.stats.case !== 'inboundRtp') continue;
      const { inbound, received, stream, rtc } = s.stats.value;
      if (stream?.kind === 'video') {
        totals.atUs = Number(rtc?.timestamp ?? 0);
        totals.framesDecoded += inbound?.framesDecoded ?? 0;
        totals.freezes += inbound?.freezeCount ?? 0;
      } else if (stream?.kind === 'audio') {
        totals.audioSamples += Number(inbound?.totalSamplesReceived ?? 0);
        totals.concealedSamples += Number(inbound?.concealedSamples ?? 0);
        totals.audioPackets += Number(received?.packetsReceived ?? 0);
      }
    }
    return totals;
  }

  async waitForTracks(): Promise<void> {
    await this.waitFor(
      () => this.subscribed.has('video') && this.subscribed.has('audio'),
      10_000,
      'both tracks',
    );
  }

  framesBetween(fromMs: number, toMs: number): VideoSample[] {
    return this.video.filter((v) => v.atMs >= fromMs && v.atMs < toMs);
  }

  /**
   * The frames made between `fromMs` and `toMs` on the test's clock, placed by the stream's own
   * timeline (the render time the receiver gives them, shifted by the least delivery delay seen),
   * not by their arrival: frames a busy test process is handed late and in a burst count where
   * they were made. For frame rates: a rate by arrival counted 13 fps for an avatar parked at 5
   * in a loaded run, the last frames at 25 fps arriving in the window.
   */
  framesMadeBetween(fromMs: number, toMs: number): VideoSample[] {
    let offset = Infinity;
    for (const v of this.video) offset = Math.min(offset, v.atMs - v.renderMs);
    return this.video.filter((v) => v.renderMs + offset >= fromMs && v.renderMs + offset < toMs);
  }

  audioBetween(fromMs: number, toMs: number): AudioSample[] {
    return this.audio.filter((a) => a.atMs >= fromMs && a.atMs < toMs);
  }

  finals(): (ChatMessage & { atMs: number })[] {
    return this.chat.filter((m) => m.final);
  }

  async leave(): Promise<void> {
    // Disconnecting ends the track streams (and their loops) too.
    await this.room.disconnect();
  }
}

/** Running totals of a receiver's inbound streams (see AvatarClient.receivedStats). */
export interface ReceivedStats {
  /** When the receiver took these figures (libwebrtc's clock, µs). */
  atUs: number;
  framesDecoded: number;
  /** Video freezes, as libwebrtc counts them (a frame late by 3 frames' time or 150 ms more). */
  freezes: number;
  /** Audio samples played out, and those of them made up by the jitter buffer (lost or late). */
  audioSamples: number;
  concealedSamples: number;
  audioPackets: number;
}

/** A receiver's audio jitter buffer totals: seconds of delay summed over the samples emitted. */
export interface JitterBufferTotals {
  delayS: number;
  emitted: number;
}

/** The mean time (ms) a sample spent in the jitter buffer between two readings. */
export function meanJitterBufferMs(
  from?: JitterBufferTotals,
  to?: JitterBufferTotals,
): number | undefined {
  if (!from || !to || to.emitted <= from.emitted) return undefined;
  return ((to.delayS - from.delayS) / (to.emitted - from.emitted)) * 1000;
}

export function rms(samples: AudioSample[]): number {
  let sum = 0;
  let n = 0;
  for (const s of samples) {
    sum += s.rms * s.rms * s.samples.length;
    n += s.samples.length;
  }
  return n ? Math.sqrt(sum / n) : 0;
}

export function concatAudio(samples: AudioSample[]): Float32Array {
  const n = samples.reduce((k, s) => k + s.samples.length, 0);
  const out = new Float32Array(n);
  let o = 0;
  for (const s of samples) {
    for (let i = 0; i < s.samples.length; i++) out[o++] = s.samples[i]! / 32768;
  }
  return out;
}
