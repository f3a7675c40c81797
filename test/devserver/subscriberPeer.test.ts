// SPDX-License-Identifier: GPL-3.0-or-later
import { pino } from 'pino';
import { expect, it } from 'vitest';
import { SubscriberPeer } from '../../src/devserver/rtc/subscriberPeer.js';

// The SDP side only: nothing connects (ICE on loopback is gathered, never used).
it("a subscriber connection keeps the SDK's ClientHello that comes before its own ICE is connected", async () => {
  // The SDK answers a=setup:active and sends its ClientHello once its own ICE check succeeds;
  // werift, controlling here, starts its DTLS server only once its nomination is answered, a
  // moment later. Dropped, the handshake waited for the SDK's retransmission (about 50 ms).
  const offers: string[] = [];
  const peer = new SubscriberPeer(
    { nodeIp: '127.0.0.1' },
    {
      onCandidate: () => undefined,
      onOffer: (sdp) => offers.push(sdp),
      onStateChange: () => undefined,
    },
    pino({ level: 'silent' }),
  );
  try {
    peer.start();
    await expect.poll(() => offers.length).toBe(1);
    const dtls = peer.pc.dtlsTransports[0]!;
    const connection = dtls.iceTransport.connection;
    const clientHello = Buffer.from([22, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
    connection.onData.execute(clientHello);
    // What werift does when its DTLS starts: announces it, then its endpoint listens.
    const received: Buffer[] = [];
    dtls.onStateChange.execute('connecting');
    connection.onData.subscribe((data: Buffer) => received.push(data));
    await Promise.resolve();
    expect(received).toEqual([clientHello]);
  } finally {
    await peer.close();
  }
});
