// SPDX-License-Identifier: GPL-3.0-or-later
/** Average all channels into one (equal weights; no pan law, clipping is impossible). */
export function downmixToMono(channels: readonly Float32Array[]): Float32Array {
  const first = channels[0];
  if (!first) return new Float32Array(0);
  if (channels.length === 1) return first;
  const length = Math.min(...channels.map((c) => c.length));
  const mono = new Float32Array(length);
  for (const channel of channels) {
    for (let i = 0; i < length; i++) mono[i]! += channel[i]!;
  }
  const scale = 1 / channels.length;
  for (let i = 0; i < length; i++) mono[i]! *= scale;
  return mono;
}

/** Float [-1, 1] to signed 16-bit with rounding and clipping (what AudioFrame wants). */
export function toInt16(mono: Float32Array): Int16Array {
  const out = new Int16Array(mono.length);
  for (let i = 0; i < mono.length; i++) {
    const v = Math.round(mono[i]! * 32768);
    out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
  }
  return out;
}

/** Signed 16-bit back to float [-1, 1). */
export function fromInt16(pcm: Int16Array): Float32Array {
  const out = new Float32Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = pcm[i]! / 32768;
  return out;
}
