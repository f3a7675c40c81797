// SPDX-License-Identifier: GPL-3.0-or-later
import type { RTCPeerConnection } from 'werift';

/** A flight is a few records; more than this before the handshake starts is not a handshake. */
const MAX_EARLY_RECORDS = 16;

/** DTLS records start with a content type byte of 20 to 63 (RFC 7983). */
const isDtls = (data: Buffer) => data.length > 0 && data[0]! >= 20 && data[0]! <= 63;

const watched = new WeakSet<object>();

/**
 * Keeps the DTLS records that reach a peer connection's ICE transport before werift's DTLS
 * transport listens to it, and hands them over the moment it does.
 *
 * werift starts DTLS once its ICE agent is connected, which on the controlled side is when the
 * SDK's nomination arrives; the SDK (libwebrtc) sends its ClientHello as soon as its own check
 * succeeded, a moment earlier. werift dropped that ClientHello, and the handshake waited for the
 * SDK's retransmission: 150 to 180 ms of every connection's start, measured on loopback (the
 * first ClientHello 1.5 ms before werift's DTLS started, the next one 155 ms after).
 * On a subscriber connection werift is the controlling side, and its ICE is connected once its
 * own nomination is answered, again after the SDK's ClientHello: there the retransmission came
 * about 50 ms later.
 *
 * Call after each local description is set (the transports exist then, and no DTLS can arrive
 * before ICE checks start); transports already watched are left alone.
 */
export function keepEarlyDtls(pc: RTCPeerConnection): void {
  for (const dtls of pc.dtlsTransports) {
    if (watched.has(dtls) || dtls.state !== 'new') continue;
    watched.add(dtls);
    const connection = dtls.iceTransport.connection;
    const early: Buffer[] = [];
    const listener = connection.onData.subscribe((data: Buffer) => {
      if (isDtls(data) && early.length < MAX_EARLY_RECORDS) early.push(data);
    });
    const states = dtls.onStateChange.subscribe((state) => {
      if (state === 'new') return;
      listener.unSubscribe();
      states.unSubscribe();
      // `connecting` is announced just before werift creates its DTLS endpoint, synchronously:
      // replay in a microtask, once it exists and before any record that arrives after it. A
      // later turn (setImmediate) let live records go first on a busy event loop: the handshake
      // was under way when the stale ClientHellos came, werift started it over, and the SDK's
      // connection never came up (1 of 16 joins at once, about every other run).
      if (state === 'connecting' && early.length > 0) {
        queueMicrotask(() => {
          for (const data of early.splice(0)) connection.onData.execute(data);
        });
      }
    });
  }
}
