// SPDX-License-Identifier: GPL-3.0-or-later
/** NAL unit types (RFC 6184; H.264 Table 7-1) that matter for finding a key frame. */
const NAL_SPS = 7;
const NAL_STAP_A = 24;

/**
 * Whether an RTP payload (RFC 6184, packetization mode 0 or 1) starts a key frame. Encoders send
 * the sequence and picture parameter sets (SPS, PPS) right before each IDR picture, alone or
 * aggregated in a STAP-A, and a decoder needs them to decode it: so the packet with the SPS is
 * the start, not the IDR slice after it. A subscriber that starts decoding elsewhere gets nothing
 * until the next key frame, so video forwarding to a new subscriber starts here.
 */
export function isH264KeyframeStart(payload: Buffer): boolean {
  if (payload.length < 1) return false;
  const type = payload[0]! & 0x1f;
  if (type === NAL_SPS) return true;
  if (type !== NAL_STAP_A) return false;
  // Aggregated NAL units, each after its 16-bit size.
  let offset = 1;
  while (offset + 2 < payload.length) {
    if ((payload[offset + 2]! & 0x1f) === NAL_SPS) return true;
    offset += 2 + payload.readUInt16BE(offset);
  }
  return false;
}
