// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Band-limited sample-rate conversion by windowed-sinc interpolation (Kaiser window), for any
 * rate pair: 22 050 Hz TTS output up to 48 kHz for Opus, uploads down to 8-16 kHz for analysis.
 *
 * The low-pass sits at 94 % of the lower Nyquist frequency with about 80 dB stop-band rejection,
 * so downsampling does not alias and upsampling does not image. For the usual rate pairs the
 * filter is a polyphase bank precomputed once per pair (one coefficient set per output phase,
 * e.g. 320 phases x 26 taps for 22 050 -> 48 000), so each output sample is one short dot
 * product. Exotic pairs with thousands of phases interpolate a tabulated kernel instead.
 *
 * `StreamingResampler` keeps the filter history between blocks, so a stream cut into arbitrary
 * chunks (an agent's `lk.audio_stream`) resamples seamlessly; `resample` converts a whole buffer
 * (edges treated as silence, exact for TTS sentence chunks, which start and end silent).
 */

const ZERO_CROSSINGS = 12;
const KAISER_BETA = 8.6;
const PASSBAND = 0.94;
const MAX_PHASES = 4096;
const TABLE_STEPS_PER_CROSSING = 512;

function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const half = x / 2;
  for (let k = 1; k < 50; k++) {
    term *= (half / k) * (half / k);
    sum += term;
    if (term < 1e-12 * sum) break;
  }
  return sum;
}

const I0_BETA = besselI0(KAISER_BETA);

/** sinc(u) x kaiser(u / ZERO_CROSSINGS), u in zero crossings of the low-pass. */
function kernelAt(u: number): number {
  const a = Math.abs(u);
  if (a >= ZERO_CROSSINGS) return 0;
  const sinc = a < 1e-12 ? 1 : Math.sin(Math.PI * a) / (Math.PI * a);
  const r = a / ZERO_CROSSINGS;
  return (sinc * besselI0(KAISER_BETA * Math.sqrt(1 - r * r))) / I0_BETA;
}

let kernelTable: Float32Array | undefined;

function kernelTableOnce(): Float32Array {
  if (kernelTable) return kernelTable;
  const size = ZERO_CROSSINGS * TABLE_STEPS_PER_CROSSING;
  kernelTable = new Float32Array(size + 2);
  for (let i = 0; i <= size; i++) kernelTable[i] = kernelAt(i / TABLE_STEPS_PER_CROSSING);
  return kernelTable;
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

interface Filter {
  /** Input samples advanced per output sample = step / phases (reduced fraction). */
  step: number;
  phases: number;
  /** Input samples either side of the output instant that can contribute. */
  halfWidth: number;
  /** Polyphase bank: taps for phase p at [p * 2 * halfWidth, (p + 1) * 2 * halfWidth), scaled. */
  bank?: Float32Array;
  /** Kernel scale for the interpolated path. */
  scale: number;
}

const filters = new Map<string, Filter>();

function filterFor(fromRate: number, toRate: number): Filter {
  const key = `${fromRate}>${toRate}`;
  const cached = filters.get(key);
  if (cached) return cached;
  const divisor = gcd(fromRate, toRate);
  const step = fromRate / divisor;
  const phases = toRate / divisor;
  const cutoff = 0.5 * Math.min(1, toRate / fromRate) * PASSBAND; // cycles per input sample
  const scale = 2 * cutoff;
  const halfWidth = Math.ceil(ZERO_CROSSINGS / scale);
  const filter: Filter = { step, phases, halfWidth, scale };
  if (phases <= MAX_PHASES) {
    const taps = 2 * halfWidth;
    const bank = new Float32Array(phases * taps);
    for (let p = 0; p < phases; p++) {
      const frac = p / phases; // output instant lies frac input samples after tap 'centre'
      for (let k = 0; k < taps; k++) {
        // Tap k reads input sample (centre - halfWidth + 1 + k).
        const distance = frac - (k - halfWidth + 1);
        bank[p * taps + k] = scale * kernelAt(distance * scale);
      }
    }
    filter.bank = bank;
  }
  filters.set(key, filter);
  return filter;
}

/**
 * Stateful resampler for a continuous mono stream. `push` returns the output that the input so
 * far determines (the filter's look-ahead, about halfWidth input samples, stays pending);
 * `flush` ends the stream and returns the rest, so that the total output length is
 * round(total input x toRate / fromRate).
 */
export class StreamingResampler {
  private readonly filter: Filter;
  /** Input history; buffer[0] is absolute input sample `bufferStart`. */
  private buffer = new Float32Array(0);
  private bufferStart = 0;
  private inputLength = 0;
  private outputIndex = 0;
  private flushed = false;

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
  ) {
    if (
      !(fromRate > 0) ||
      !(toRate > 0) ||
      !Number.isInteger(fromRate) ||
      !Number.isInteger(toRate)
    ) {
      throw new RangeError(`sample rates must be positive integers (got ${fromRate} -> ${toRate})`);
    }
    this.filter = filterFor(fromRate, toRate);
  }

  push(chunk: Float32Array): Float32Array {
    if (this.flushed) throw new Error('StreamingResampler: push after flush');
    this.append(chunk);
    this.inputLength += chunk.length;
    return this.produce(this.inputLength - this.filter.halfWidth, Infinity);
  }

  flush(): Float32Array {
    if (this.flushed) return new Float32Array(0);
    this.flushed = true;
    const total = Math.round((this.inputLength * this.toRate) / this.fromRate);
    return this.produce(Infinity, total);
  }

  private append(chunk: Float32Array): void {
    // Drop history no future output can reach.
    const { step, phases, halfWidth } = this.filter;
    const nextCentre = Math.floor((this.outputIndex * step) / phases);
    const keepFrom = Math.max(this.bufferStart, nextCentre - halfWidth + 1);
    const kept = this.buffer.subarray(keepFrom - this.bufferStart);
    const merged = new Float32Array(kept.length + chunk.length);
    merged.set(kept);
    merged.set(chunk, kept.length);
    this.buffer = merged;
    this.bufferStart = keepFrom;
  }

  /** Emit outputs whose centre sample is < centreLimit, up to outputLimit outputs in total. */
  private produce(centreLimit: number, outputLimit: number): Float32Array {
    const { step, phases, halfWidth, bank, scale } = this.filter;
    const taps = 2 * halfWidth;
    const firstOutput = this.outputIndex;
    // Outputs with centre < centreLimit are those with n * step < centreLimit * phases.
    const lastOutput = Math.min(
      outputLimit,
      Number.isFinite(centreLimit)
        ? Math.max(0, Math.ceil((centreLimit * phases) / step))
        : outputLimit,
    );
    const out = new Float32Array(Math.max(0, lastOutput - firstOutput));
    const buffer = this.buffer;
    const base = this.bufferStart;
    const end = base + buffer.length;
    const table = bank ? undefined : kernelTableOnce();
    for (let n = firstOutput; n < lastOutput; n++) {
      const position = n * step;
      const centre = Math.floor(position / phases);
      const phase = position - centre * phases;
      const first = centre - halfWidth + 1;
      let acc = 0;
      if (bank) {
        const offset = phase * taps;
        const kStart = Math.max(0, base - first);
        const kEnd = Math.min(taps, end - first);
        for (let k = kStart; k < kEnd; k++) acc += buffer[first + k - base]! * bank[offset + k]!;
      } else {
        const frac = phase / phases;
        const tableScale = scale * TABLE_STEPS_PER_CROSSING;
        const limit = ZERO_CROSSINGS * TABLE_STEPS_PER_CROSSING;
        for (let k = 0; k < taps; k++) {
          const i = first + k;
          if (i < base || i >= end) continue;
          const d = frac - (k - halfWidth + 1);
          const pos = (d < 0 ? -d : d) * tableScale;
          if (pos >= limit) continue;
          const t = pos | 0;
          const h = table![t]! + (table![t + 1]! - table![t]!) * (pos - t);
          acc += buffer[i - base]! * h;
        }
        acc *= scale;
      }
      out[n - firstOutput] = acc;
    }
    this.outputIndex += out.length;
    return out;
  }
}

/**
 * Resample a whole mono buffer from `fromRate` to `toRate`. The output length is
 * round(input length x toRate / fromRate), so durations are preserved.
 */
export function resample(mono: Float32Array, fromRate: number, toRate: number): Float32Array {
  if (!(fromRate > 0) || !(toRate > 0)) {
    throw new RangeError(`sample rates must be positive (got ${fromRate} -> ${toRate})`);
  }
  if (fromRate === toRate) return mono.slice();
  const resampler = new StreamingResampler(fromRate, toRate);
  const head = resampler.push(mono);
  const tail = resampler.flush();
  const out = new Float32Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}
