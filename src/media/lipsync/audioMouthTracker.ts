// SPDX-License-Identifier: GPL-3.0-or-later
import { REST_POSE, VISEMES, visemeIndex, type MouthPose } from './viseme.js';

export interface AudioMouthTrackerOptions {
  /** How much audio history (ms) is kept for `poseAt`. Default 30 s. */
  readonly historyMs?: number;
  /** The mouth moves this much ahead of the sound. Default 20 ms. */
  readonly leadMs?: number;
  /** Opening time constant. Default 18 ms. */
  readonly attackMs?: number;
  /**
   * Closing time constant. Default 40 ms: about one video frame, so the jaw closes with the
   * syllable (70 ms held it open into the next one: r against the envelope 0.03 to 0.05 lower).
   */
  readonly releaseMs?: number;
}

/** Analysis hop: 10 ms is a quarter of a 25 fps frame, fine enough for attack and release. */
const HOP_MS = 10;
/** Below this level (dBFS) a hop is silence, whatever the running peak says. */
const SILENCE_DB = -55;
/**
 * The jaw opens in proportion to the hop's amplitude, wide open this far (dB) under the running
 * speech peak. Proportional, not logarithmic: a log scale (closed 30 dB under the peak, open 6
 * dB under) held the mouth nearly wide open through every voiced stretch, so what a viewer saw
 * followed the loudness they heard at r = 0.78 on the speech fixture; in proportion, 0.85
 * (test/media/lipsync/lipsyncOnSpeech.test.ts).
 */
const OPEN_BELOW_PEAK_DB = 2;
/** The running peak never sinks below this (dBFS), so that faint noise never opens the mouth. */
const PEAK_FLOOR_DB = -30;
/** The running peak forgets loud moments at this rate, so quieter speakers still open the mouth. */
const PEAK_DECAY_DB_PER_S = 4;
const INITIAL_PEAK_DB = -18;
/** Cutoff of the one-pole low-pass that measures the low band (rounded vowels, nasals). */
const LOW_BAND_HZ = 900;
/** A viseme class must persist this many hops before the mouth changes shape (no flicker). */
const SHAPE_HOLD_HOPS = 2;

/**
 * Mouth poses from the audio itself, for audio with no phoneme timing (`/audio` payloads, the
 * LiveKit avatar protocol, TTS engines without timestamps). Openness follows the amplitude envelope
 * in proportion to a running speech peak, with attack and release; the shape comes from the spectrum:
 * noisy high-frequency hops are sibilants, voiced hops are sorted into rounded, open and spread
 * vowels by their mean frequency and low-band share.
 *
 * Clock: the tracker keeps its own audio time, which advances with the samples pushed (or jumps to
 * `atMs` when a push names its position). Push audio when you hand it to the audio sink, and ask
 * `poseAt(playoutMs)` for each video frame: the frame shown at time t gets the pose of the audio
 * heard at time t. There is deliberately no "next pose" cursor: a cursor drifts from the audio as
 * soon as a frame is late or the queue is cleared, the playout position does not.
 */
export class AudioMouthTracker {
  private readonly capacity: number;
  private readonly leadMs: number;
  private readonly attackMs: number;
  private readonly releaseMs: number;
  private readonly openness: Float32Array;
  private readonly visemes: Uint8Array;

  /** Audio time (ms) of hop 0. */
  private originMs = 0;
  /** Hops analysed so far (hop k covers [origin + k*10, origin + (k+1)*10) ms). */
  private hopCount = 0;
  private started = false;

  // Per-rate analysis state.
  private sampleRate = 0;
  private hopSize = 0;
  private lowAlpha = 0;
  private pending = new Float32Array(0);
  private pendingCount = 0;
  private lastSample = 0;
  private lowState = 0;

  // Envelope and shape state.
  private peakDb = INITIAL_PEAK_DB;
  private open = 0;
  private shape = visemeIndex('rest');
  private candidate = visemeIndex('rest');
  private candidateHops = 0;

  constructor(options: AudioMouthTrackerOptions = {}) {
    this.capacity = Math.max(1, Math.ceil((options.historyMs ?? 30_000) / HOP_MS));
    this.leadMs = options.leadMs ?? 20;
    this.attackMs = options.attackMs ?? 18;
    this.releaseMs = options.releaseMs ?? 40;
    this.openness = new Float32Array(this.capacity);
    this.visemes = new Uint8Array(this.capacity);
  }

  /** Audio time (ms) up to which poses are known. */
  get endMs(): number {
    return this.originMs + this.hopCount * HOP_MS;
  }

  /**
   * Audio time (ms) up to which `poseAt` is final: more audio pushed after the end changes no pose
   * before it. A pose reads the hop `leadMs` ahead, and a hop is analysed once it is whole, so
   * this is `leadMs` short of the whole hops pushed. (A face sent ahead up to the audio's end sent
   * its last line again once the next audio came: about one line a push.)
   */
  get finalUntilMs(): number {
    return this.endMs - this.leadMs;
  }

  /**
   * Analyse more audio. Mono PCM, Float32 in [-1, 1] or Int16, at any sample rate. `atMs` places
   * the chunk on the tracker's clock: a gap becomes silence, an earlier position drops what was
   * after it (as after an interrupt). Without it the chunk follows the previous one.
   */
  push(pcm: Float32Array | Int16Array, sampleRate: number, atMs?: number): void {
    if (!(sampleRate > 0)) throw new RangeError(`sampleRate must be positive, got ${sampleRate}`);
    if (!this.started) {
      this.started = true;
      this.originMs = atMs ?? 0;
    } else if (atMs !== undefined) {
      this.moveTo(atMs);
    }
    if (sampleRate !== this.sampleRate) this.setRate(sampleRate);
    const scale = pcm instanceof Int16Array ? 1 / 32768 : 1;
    for (let i = 0; i < pcm.length; i++) {
      this.pending[this.pendingCount++] = (pcm[i] as number) * scale;
      if (this.pendingCount === this.hopSize) {
        this.analyseHop();
        this.pendingCount = 0;
      }
    }
  }

  /**
   * Forget everything from `atMs` on (an interrupt cut the audio there): poses after it are rest
   * until new audio is pushed, and the mouth closes from there.
   */
  truncate(atMs: number): void {
    const hop = Math.floor((atMs - this.originMs) / HOP_MS);
    if (hop < this.hopCount) this.hopCount = Math.max(this.firstHop(), hop, 0);
    this.pendingCount = 0;
    this.open = 0;
    this.shape = visemeIndex('rest');
    this.candidateHops = 0;
  }

  /** Drop all audio and restart the clock at the next push. */
  reset(): void {
    this.started = false;
    this.hopCount = 0;
    this.originMs = 0;
    this.truncate(0);
    this.peakDb = INITIAL_PEAK_DB;
  }

  /** The mouth for the audio heard at `tMs`; the rest pose where no audio was pushed. */
  poseAt(tMs: number): MouthPose {
    const hop = Math.floor((tMs + this.leadMs - this.originMs) / HOP_MS);
    if (!this.started || hop < this.firstHop() || hop >= this.hopCount) return REST_POSE;
    const slot = hop % this.capacity;
    const openness = this.openness[slot] ?? 0;
    if (openness === 0) return REST_POSE;
    return { viseme: VISEMES[this.visemes[slot] ?? 0] ?? 'rest', openness };
  }

  private firstHop(): number {
    return Math.max(0, this.hopCount - this.capacity);
  }

  private moveTo(atMs: number): void {
    const end = this.endMs + (this.sampleRate ? (this.pendingCount / this.sampleRate) * 1000 : 0);
    if (Math.abs(atMs - end) < 1) return;
    if (atMs < end) {
      this.truncate(atMs);
      return;
    }
    // A gap: finish the partial hop, then pad with silence hops (or restart the clock if the gap is
    // longer than the history anyway).
    if (this.pendingCount > 0) {
      this.pending.fill(0, this.pendingCount);
      this.analyseHop();
      this.pendingCount = 0;
    }
    const gapHops = Math.round((atMs - this.endMs) / HOP_MS);
    if (gapHops >= this.capacity) {
      this.originMs = atMs;
      this.hopCount = 0;
      this.open = 0;
      return;
    }
    for (let i = 0; i < gapHops; i++) this.store(0, visemeIndex('rest'));
    this.open = 0;
  }

  private setRate(sampleRate: number): void {
    this.sampleRate = sampleRate;
    this.hopSize = Math.max(1, Math.round((sampleRate * HOP_MS) / 1000));
    this.pending = new Float32Array(this.hopSize);
    this.pendingCount = 0;
    this.lowAlpha = 1 - Math.exp((-2 * Math.PI * LOW_BAND_HZ) / sampleRate);
  }

  private analyseHop(): void {
    const x = this.pending;
    const n = this.hopSize;
    let energy = 0;
    let diffEnergy = 0;
    let lowEnergy = 0;
    let crossings = 0;
    let prev = this.lastSample;
    let low = this.lowState;
    for (let i = 0; i < n; i++) {
      const s = x[i] as number;
      energy += s * s;
      const d = s - prev;
      diffEnergy += d * d;
      low += this.lowAlpha * (s - low);
      lowEnergy += low * low;
      if (s >= 0 !== prev >= 0) crossings++;
      prev = s;
    }
    this.lastSample = prev;
    this.lowState = low;
    energy /= n;
    diffEnergy /= n;
    lowEnergy /= n;

    const db = 10 * Math.log10(energy + 1e-12);
    const decay = (PEAK_DECAY_DB_PER_S * HOP_MS) / 1000;
    this.peakDb = Math.max(db, this.peakDb - decay, PEAK_FLOOR_DB);

    const wideOpen = 10 ** ((this.peakDb - OPEN_BELOW_PEAK_DB) / 20);
    const level = db < SILENCE_DB ? 0 : Math.min(1, Math.sqrt(energy) / wideOpen);

    // Mean ("RMS") frequency from the first difference: for a tone of frequency f the ratio of
    // difference energy to energy is 4 sin²(πf/sr).
    const ratio = energy > 0 ? diffEnergy / energy : 0;
    const meanHz = (Math.asin(Math.min(1, Math.sqrt(ratio) / 2)) * this.sampleRate) / Math.PI;
    const zcrHz = (crossings * this.sampleRate) / (2 * n);
    const lowShare = energy > 0 ? lowEnergy / energy : 0;
    const cls = level > 0 ? classify(meanHz, zcrHz, lowShare) : visemeIndex('rest');

    // The shape changes only when a new class persists, and only while the mouth is open enough
    // for it to show.
    if (cls === this.candidate) this.candidateHops++;
    else {
      this.candidate = cls;
      this.candidateHops = 1;
    }
    if (this.candidateHops >= SHAPE_HOLD_HOPS && cls !== visemeIndex('rest')) this.shape = cls;

    // The jaw follows the loudness whatever the lip shape (JALI: jaw and lips move apart); the
    // shape itself narrows rounded and spread vowels. Scaling the jaw down per class as well
    // (a rounded vowel to 0.7, a sibilant to 0.45) cost 0.03 to 0.05 of correlation with the
    // envelope on three stock voices and two texts.
    const tau = level > this.open ? this.attackMs : this.releaseMs;
    this.open += (level - this.open) * (1 - Math.exp(-HOP_MS / tau));
    if (this.open < 0.02 && level === 0) this.open = 0;
    this.store(this.open, this.open === 0 ? visemeIndex('rest') : this.shape);
  }

  private store(openness: number, viseme: number): void {
    const slot = this.hopCount % this.capacity;
    this.openness[slot] = openness;
    this.visemes[slot] = viseme;
    this.hopCount++;
  }
}

/**
 * A rough class from three cheap spectral measures, with thresholds fitted on espeak-ng speech
 * (2 voices, 3 sentences, 10 ms hops labelled by the phoneme timings): sibilants are noise with
 * most energy above 3-4 kHz; rounded vowels and labials (u, w, o, m) keep their energy low; among
 * brighter vowels a large low-band share means a close vowel (i), otherwise open (a) or mid (e)
 * by mean frequency. It is right for roughly half of the hops, and rarely confuses rounded with
 * open: enough for a plausible mouth, not for lip-reading.
 */
function classify(meanHz: number, zcrHz: number, lowShare: number): number {
  if (meanHz > 2600 && zcrHz > 1800) return visemeIndex(meanHz > 4800 ? 'SZ' : 'CH');
  if (lowShare > 0.8 && meanHz < 750) return visemeIndex('U');
  if (meanHz < 1050) return visemeIndex(lowShare > 0.7 ? 'U' : 'O');
  if (lowShare > 0.66) return visemeIndex('I');
  return visemeIndex(meanHz > 1300 ? 'E' : 'AA');
}
