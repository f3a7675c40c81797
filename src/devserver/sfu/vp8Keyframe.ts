// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Whether an RTP payload (VP8 payload descriptor + data, RFC 7741) starts a key frame. A
 * subscriber that starts decoding mid-GOP shows garbage or nothing, so video forwarding to a new
 * subscriber starts at a key frame.
 */
export function isVp8KeyframeStart(payload: Buffer): boolean {
  if (payload.length < 1) return false;
  const first = payload[0]!;
  const extended = (first & 0x80) !== 0;
  const startOfPartition = (first & 0x10) !== 0;
  const partitionIndex = first & 0x07;
  if (!startOfPartition || partitionIndex !== 0) return false;
  let offset = 1;
  if (extended) {
    if (payload.length < 2) return false;
    const ext = payload[1]!;
    offset = 2;
    if (ext & 0x80) {
      // PictureID: 7 or 15 bits.
      offset += (payload[offset]! & 0x80) !== 0 ? 2 : 1;
    }
    if (ext & 0x40) offset += 1; // TL0PICIDX
    if (ext & 0x30) offset += 1; // TID/Y/KEYIDX
  }
  if (payload.length <= offset) return false;
  // VP8 frame header: the P bit (inverse key frame flag) is bit 0 of the first byte.
  return (payload[offset]! & 0x01) === 0;
}
