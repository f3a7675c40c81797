// SPDX-License-Identifier: GPL-3.0-or-later
/** Analysis hop (ms): the same 10 ms as the audio mouth tracker's. */
export const FEATURE_HOP_MS = 10;
/** Analysis window (ms), Hann-shaped, centred on its hop. */
const WINDOW_MS = 25;
const MEL_BANDS = 24;
/** Band edges: below 100 Hz is pitch and hum, above 5 kHz varies with the engine's sample rate. */
const LOW_HZ = 100;
const HIGH_HZ = 5000;
/** Cepstral coefficients c1..c12 (c0, the loudness, is kept apart as the energy). */
const CEPSTRA = 12;
/** Values per frame: the cepstra, then the energy in dB. */
export const FEATURE_DIMS = CEPSTRA + 1;

/**
 * Per-hop spectral features of speech (mel cepstra and energy), computed as audio arrives, for
 * aligning two recordings of the same words (`alignPhonemes`): speech synthesized from the text
 * with known phoneme timings, and the audio actually played. Cepstra describe the spectral
 * envelope (which sound is being made) independently of pitch and loudness, so two voices
 * saying the same words give similar sequences at different speeds.
 *
 * Frames are `FEATURE_DIMS` values each, one per 10 ms hop from the first sample pushed; the
 * frame for hop k is centred on k*10 + 5 ms.
 */
export class SpeechFeatures {
  private data = new Float32Array(FEATURE_DIMS * 256);
  private count = 0;
  private sampleRate = 0;
  private hopSize = 0;
  private windowSize = 0;
  private fftSize = 0;
  private window = new Float32Array(0);
  private filters: { start: number; weights: Float32Array }[] = [];
  private dct = new Float32Array(0);
  /** Samples not yet analysed; the window reaches back before each hop's start. */
  private buffer = new Float32Array(0);
  private buffered = 0;
  /** Stream index of the buffer's first sample. */
  private offset = 0;
  private re = new Float64Array(0);
  private im = new Float64Array(0);
  private power = new Float64Array(0);
  private readonly logMel = new Float64Array(MEL_BANDS);

  /** Frames analysed so far. */
  get length(): number {
    return this.count;
  }

  /** Frame `i` (a view: copy it to keep it). */
  frame(i: number): Float32Array {
    return this.data.subarray(i * FEATURE_DIMS, (i + 1) * FEATURE_DIMS);
  }

  /** All frames, `FEATURE_DIMS` values each. */
  get frames(): Float32Array {
    return this.data.subarray(0, this.count * FEATURE_DIMS);
  }

  /** More audio: mono PCM at `sampleRate` (one rate per instance). */
  push(pcm: Float32Array | Int16Array, sampleRate: number): void {
    if (this.sampleRate === 0) this.setRate(sampleRate);
    else if (sampleRate !== this.sampleRate) {
      throw new RangeError(`one sample rate per SpeechFeatures (${this.sampleRate} Hz)`);
    }
    const scale = pcm instanceof Int16Array ? 1 / 32768 : 1;
    // The window of hop k spans [k*hop + hop/2 - win/2, ... + win): keep enough history.
    const need = this.buffered + pcm.length;
    if (need > this.buffer.length) {
      const grown = new Float32Array(Math.max(need, this.buffer.length * 2));
      grown.set(this.buffer.subarray(0, this.buffered));
      this.buffer = grown;
    }
    for (let i = 0; i < pcm.length; i++) this.buffer[this.buffered++] = (pcm[i] as number) * scale;
    const lead = Math.floor((this.windowSize - this.hopSize) / 2);
    // Hop k's window starts at k*hop - lead in stream samples; the buffer starts at `offset`.
    while (this.count * this.hopSize - lead + this.windowSize <= this.bufferEnd) {
      this.analyse(this.count * this.hopSize - lead);
    }
    // Drop what no later window needs.
    const keepFrom = this.count * this.hopSize - lead - this.offset;
    if (keepFrom > this.hopSize * 64) {
      this.buffer.copyWithin(0, keepFrom, this.buffered);
      this.buffered -= keepFrom;
      this.offset += keepFrom;
    }
  }

  /** The stream has ended: the last partial hops are analysed with silence after them. */
  end(): void {
    if (this.sampleRate === 0) return;
    const lead = Math.floor((this.windowSize - this.hopSize) / 2);
    while (this.count * this.hopSize < this.bufferEnd)
      this.analyse(this.count * this.hopSize - lead);
  }

  private get bufferEnd(): number {
    return this.offset + this.buffered;
  }

  private setRate(sampleRate: number): void {
    if (!(sampleRate >= 8000))
      throw new RangeError(`sampleRate must be >= 8000, got ${sampleRate}`);
    this.sampleRate = sampleRate;
    this.hopSize = Math.round((sampleRate * FEATURE_HOP_MS) / 1000);
    this.windowSize = Math.round((sampleRate * WINDOW_MS) / 1000);
    this.fftSize = 1 << Math.ceil(Math.log2(this.windowSize));
    this.window = Float32Array.from(
      { length: this.windowSize },
      (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (this.windowSize - 1)),
    );
    this.re = new Float64Array(this.fftSize);
    this.im = new Float64Array(this.fftSize);
    this.power = new Float64Array(this.fftSize / 2 + 1);
    this.filters = melFilters(this.fftSize, sampleRate);
    this.dct = new Float32Array(CEPSTRA * MEL_BANDS);
    for (let c = 0; c < CEPSTRA; c++) {
      for (let b = 0; b < MEL_BANDS; b++) {
        this.dct[c * MEL_BANDS + b] = Math.cos((Math.PI * (c + 1) * (b + 0.5)) / MEL_BANDS);
      }
    }
  }

  private analyse(start: number): void {
    const { re, im, fftSize, windowSize } = this;
    re.fill(0);
    im.fill(0);
    let energy = 0;
    for (let i = 0; i < windowSize; i++) {
      const at = start + i - this.offset;
      const s = at >= 0 && at < this.buffered ? (this.buffer[at] as number) : 0;
      energy += s * s;
      re[i] = s * (this.window[i] as number);
    }
    fft(re, im);
    const { power, logMel } = this;
    for (let k = 0; k <= fftSize / 2; k++)
      power[k] = (re[k] as number) ** 2 + (im[k] as number) ** 2;
    for (let b = 0; b < MEL_BANDS; b++) {
      const f = this.filters[b]!;
      let e = 0;
      for (let k = 0; k < f.weights.length; k++)
        e += (f.weights[k] as number) * (power[f.start + k] as number);
      // A floor so that silence is a flat, low spectrum rather than noise in log(0).
      logMel[b] = Math.log(e + 1e-8);
    }
    if (this.count * FEATURE_DIMS + FEATURE_DIMS > this.data.length) {
      const grown = new Float32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    const out = this.count * FEATURE_DIMS;
    for (let c = 0; c < CEPSTRA; c++) {
      let v = 0;
      for (let b = 0; b < MEL_BANDS; b++)
        v += (this.dct[c * MEL_BANDS + b] as number) * (logMel[b] as number);
      this.data[out + c] = v;
    }
    this.data[out + CEPSTRA] = 10 * Math.log10(energy / windowSize + 1e-10);
    this.count++;
  }
}

function melFilters(
  fftSize: number,
  sampleRate: number,
): { start: number; weights: Float32Array }[] {
  const mel = (hz: number) => 2595 * Math.log10(1 + hz / 700);
  const hz = (m: number) => 700 * (10 ** (m / 2595) - 1);
  const high = Math.min(HIGH_HZ, sampleRate / 2 - 200);
  const lo = mel(LOW_HZ);
  const hi = mel(high);
  const edges = Array.from({ length: MEL_BANDS + 2 }, (_, i) =>
    hz(lo + ((hi - lo) * i) / (MEL_BANDS + 1)),
  );
  const binHz = sampleRate / fftSize;
  const out: { start: number; weights: Float32Array }[] = [];
  for (let b = 0; b < MEL_BANDS; b++) {
    const [l, c, r] = [edges[b]!, edges[b + 1]!, edges[b + 2]!];
    const start = Math.ceil(l / binHz);
    const end = Math.floor(r / binHz);
    const weights = new Float32Array(Math.max(1, end - start + 1));
    for (let k = start; k <= end; k++) {
      const f = k * binHz;
      weights[k - start] = f <= c ? (f - l) / (c - l) : (r - f) / (r - c);
    }
    out.push({ start, weights });
  }
  return out;
}

/** In-place radix-2 FFT (length a power of two). */
function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      const r = re[i]!;
      re[i] = re[j]!;
      re[j] = r;
      const m = im[i]!;
      im[i] = im[j]!;
      im[j] = m;
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const ang = (-2 * Math.PI) / len;
    const wr = Math.cos(ang);
    const wi = Math.sin(ang);
    for (let i = 0; i < n; i += len) {
      let cr = 1;
      let ci = 0;
      for (let k = 0; k < len / 2; k++) {
        const a = i + k;
        const b = a + len / 2;
        const tr = re[b]! * cr - im[b]! * ci;
        const ti = re[b]! * ci + im[b]! * cr;
        re[b] = re[a]! - tr;
        im[b] = im[a]! - ti;
        re[a] = re[a]! + tr;
        im[a] = im[a]! + ti;
        const next = cr * wr - ci * wi;
        ci = cr * wi + ci * wr;
        cr = next;
      }
    }
  }
}
