// SPDX-License-Identifier: GPL-3.0-or-later
// A frontend participant in the agent's room (what a user's browser would be): it subscribes to
// the avatar, measures the loudness of its audio over time and records its lk.chat messages.
import { setTimeout as sleep } from 'node:timers/promises';
import { AudioStream, Room, RoomEvent, TrackKind, type RemoteTrack } from '@livekit/rtc-node';

export interface ChatRecord {
  text: string;
  final: boolean;
  utterance_id: string;
  atMs: number;
}

/**
 * One `lk.transcription` text stream as LiveKit's components see it (`useTextStream` reads the
 * chunks as they arrive; `useTranscriptions` filters by the sender's identity and by
 * `lk.transcribed_track_id`).
 */
export interface TranscriptionStream {
  /** `participantInfo.identity`: who the components attribute it to. */
  identity: string;
  segmentId: string;
  final: boolean;
  trackId: string | undefined;
  /** Chunks with their arrival times (this clock). */
  chunks: Array<{ text: string; atMs: number }>;
  text: string;
  done: boolean;
}

export class Frontend {
  readonly room = new Room();
  readonly chat: ChatRecord[] = [];
  /** Audio loudness per received frame: [time (ms, this clock), RMS, samples]. */
  readonly audio: Array<{ atMs: number; rms: number; samples: number }> = [];
  readonly transcriptions: TranscriptionStream[] = [];
  readonly #t0 = performance.now();
  #tracks = new Set<TrackKind>();

  now(): number {
    return performance.now() - this.#t0;
  }

  /** A Date.now() timestamp on this frontend's clock. */
  fromEpoch(epochMs: number): number {
    return epochMs - (Date.now() - this.now());
  }

  async join(url: string, token: string): Promise<void> {
    this.room.on(RoomEvent.TrackSubscribed, (track: RemoteTrack) => {
      this.#tracks.add(track.kind!);
      if (track.kind !== TrackKind.KIND_AUDIO) return;
      void (async () => {
        for await (const frame of new AudioStream(track, { sampleRate: 48_000, numChannels: 1 })) {
          const samples = new Int16Array(frame.data);
          let sum = 0;
          for (const s of samples) sum += s * s;
          this.audio.push({
            atMs: this.now(),
            rms: Math.sqrt(sum / Math.max(1, samples.length)),
            samples: samples.length,
          });
        }
      })().catch(() => undefined);
    });
    this.room.on(RoomEvent.DataReceived, (payload, _participant, _kind, topic) => {
      if (topic !== 'lk.chat') return;
      const message = JSON.parse(new TextDecoder().decode(payload)) as Omit<ChatRecord, 'atMs'>;
      this.chat.push({ ...message, atMs: this.now() });
    });
    this.room.registerTextStreamHandler('lk.transcription', (reader, participantInfo) => {
      const attributes = reader.info.attributes ?? {};
      const stream: TranscriptionStream = {
        identity: participantInfo.identity,
        segmentId: attributes['lk.segment_id'] ?? '',
        final: attributes['lk.transcription_final'] === 'true',
        trackId: attributes['lk.transcribed_track_id'],
        chunks: [],
        text: '',
        done: false,
      };
      this.transcriptions.push(stream);
      void (async () => {
        for await (const chunk of reader) {
          stream.chunks.push({ text: chunk, atMs: this.now() });
          stream.text += chunk;
        }
        stream.done = true;
      })().catch(() => undefined); // cut by leaving the room at the end of a test
    });
    await this.room.connect(url, token, { autoSubscribe: true, dynacast: false });
  }

  async waitForTracks(timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.#tracks.has(TrackKind.KIND_AUDIO) || !this.#tracks.has(TrackKind.KIND_VIDEO)) {
      if (Date.now() > deadline) throw new Error('the avatar tracks never arrived');
      await sleep(20);
    }
  }

  finals(): ChatRecord[] {
    return this.chat.filter((m) => m.final);
  }

  /** RMS of the audio received between two times of this clock; NaN when none arrived. */
  rmsBetween(fromMs: number, toMs: number): number {
    let sum = 0;
    let n = 0;
    for (const a of this.audio) {
      if (a.atMs < fromMs || a.atMs >= toMs) continue;
      sum += a.rms * a.rms * a.samples;
      n += a.samples;
    }
    return n ? Math.sqrt(sum / n) : NaN;
  }

  /** Milliseconds of audio (by sample count) received since a time of this clock. */
  audioMsSince(fromMs: number): number {
    let n = 0;
    for (const a of this.audio) if (a.atMs >= fromMs) n += a.samples;
    return (n / 48_000) * 1000;
  }

  /**
   * RMS of the last `ms` of audio received, on the audio's own timeline (sample count), not by
   * arrival time: a starved event loop receives frames in bursts, so arrival times can show a
   * quiet gap where the audio itself has none.
   */
  rmsOfLastAudio(ms: number): number {
    let want = (ms / 1000) * 48_000;
    let sum = 0;
    let n = 0;
    for (let i = this.audio.length - 1; i >= 0 && want > 0; i--) {
      const a = this.audio[i]!;
      sum += a.rms * a.rms * a.samples;
      n += a.samples;
      want -= a.samples;
    }
    return n ? Math.sqrt(sum / n) : NaN;
  }

  async leave(): Promise<void> {
    await this.room.disconnect();
  }
}
