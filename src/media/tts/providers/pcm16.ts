// SPDX-License-Identifier: GPL-3.0-or-later
/** Little-endian signed 16-bit PCM (a provider's raw output) as float samples in [-1, 1]. */
export function pcm16ToFloat(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(bytes.byteLength >> 1);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true) / 32768;
  return out;
}

/**
 * Joins base64 PCM pieces that may split a sample between messages: the odd byte waits for the
 * next piece.
 */
export class Pcm16Decoder {
  private carry: Uint8Array | undefined;

  decode(base64: string): Float32Array {
    let bytes: Uint8Array = Buffer.from(base64, 'base64');
    if (this.carry) {
      const joined = new Uint8Array(this.carry.length + bytes.length);
      joined.set(this.carry);
      joined.set(bytes, this.carry.length);
      bytes = joined;
      this.carry = undefined;
    }
    if (bytes.length % 2 === 1) {
      this.carry = bytes.slice(bytes.length - 1);
      bytes = bytes.subarray(0, bytes.length - 1);
    }
    return pcm16ToFloat(bytes);
  }
}
