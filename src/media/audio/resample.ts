/**
 * Band-limited sample-rate conversion by windowed-sinc interpolation (Kaiser window), for any
 * rate pair: 22 050 Hz TTS output up to 48 kHz for Opus, uploads down to 16 kHz for analysis.
 *
 * The low-pass sits at 94 % of the lower Nyquist frequency, so downsampling does not alias and
 * upsampling does not image. The kernel is tabulated once per process and read with linear
 * interpolation, which keeps the cost at one multiply-add per tap (about 2 x 12 taps per output
 * sample when upsampling, widened by the decimation factor when downsampling).
 *
 * Whole buffers only: the edges are treated as silence, which is exact for TTS sentence chunks
 * (they start and end silent). A continuous stream cut into arbitrary blocks needs a stateful
 * resampler instead (rtc-node's AudioResampler does that).
 */

const ZERO_CROSSINGS = 12;
const TABLE_STEPS_PER_CROSSING = 512;
const KAISER_BETA = 8.6; // about 80 dB stop-band rejection
const PASSBAND = 0.94;

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

let kernelTable: Float32Array | undefined;

/** sinc(u) * kaiser(u / ZERO_CROSSINGS) for u in [0, ZERO_CROSSINGS], plus one guard entry. */
function kernel(): Float32Array {
  if (kernelTable) return kernelTable;
  const size = ZERO_CROSSINGS * TABLE_STEPS_PER_CROSSING;
  const table = new Float32Array(size + 2);
  const norm = besselI0(KAISER_BETA);
  for (let i = 0; i <= size; i++) {
    const u = i / TABLE_STEPS_PER_CROSSING;
    const sinc = i === 0 ? 1 : Math.sin(Math.PI * u) / (Math.PI * u);
    const r = u / ZERO_CROSSINGS;
    table[i] = (sinc * besselI0(KAISER_BETA * Math.sqrt(Math.max(0, 1 - r * r)))) / norm;
  }
  kernelTable = table;
  return table;
}

/**
 * Resample mono float PCM from `fromRate` to `toRate`. The output length is
 * round(input length * toRate / fromRate), so durations are preserved.
 */
export function resample(mono: Float32Array, fromRate: number, toRate: number): Float32Array {
  if (!(fromRate > 0) || !(toRate > 0)) {
    throw new RangeError(`sample rates must be positive (got ${fromRate} -> ${toRate})`);
  }
  if (fromRate === toRate) return mono.slice();
  const table = kernel();
  const ratio = toRate / fromRate;
  // Cut-off in cycles per input sample (0.5 = input Nyquist).
  const cutoff = 0.5 * Math.min(1, ratio) * PASSBAND;
  const scale = 2 * cutoff; // kernel argument u = |x| * 2 * cutoff, in zero crossings
  const halfWidth = Math.ceil(ZERO_CROSSINGS / scale);
  const tableScale = scale * TABLE_STEPS_PER_CROSSING;
  const tableLimit = ZERO_CROSSINGS * TABLE_STEPS_PER_CROSSING;
  const inLength = mono.length;
  const outLength = Math.round((inLength * toRate) / fromRate);
  const out = new Float32Array(outLength);
  const step = fromRate / toRate;

  for (let n = 0; n < outLength; n++) {
    const t = n * step;
    const center = Math.floor(t);
    const first = Math.max(0, center - halfWidth + 1);
    const last = Math.min(inLength - 1, center + halfWidth);
    let acc = 0;
    for (let k = first; k <= last; k++) {
      const d = t - k;
      const pos = (d < 0 ? -d : d) * tableScale;
      if (pos >= tableLimit) continue;
      const i = pos | 0;
      const frac = pos - i;
      const h = table[i]! + (table[i + 1]! - table[i]!) * frac;
      acc += mono[k]! * h;
    }
    out[n] = acc * scale;
  }
  return out;
}
