// SPDX-License-Identifier: GPL-3.0-or-later
import { Event, type RTCPeerConnection } from 'werift';
import { describe, expect, it } from 'vitest';
import { keepEarlyDtls } from '../../src/devserver/rtc/earlyDtls.js';

/**
 * werift's own events, wired as in a peer connection: the ICE connection's data event, to
 * which werift's DTLS endpoint subscribes once the DTLS transport is `connecting`.
 */
function peer() {
  const onData = new Event<[Buffer]>();
  const onStateChange = new Event<[string]>();
  const transport = { state: 'new', iceTransport: { connection: { onData } }, onStateChange };
  const pc = { dtlsTransports: [transport] } as unknown as RTCPeerConnection;
  const dtlsReceived: Buffer[] = [];
  /** What werift does on `connecting`: announces it, then its DTLS endpoint listens. */
  const startDtls = () => {
    transport.state = 'connecting';
    onStateChange.execute('connecting');
    onData.subscribe((data) => dtlsReceived.push(data));
  };
  return { pc, onData, startDtls, dtlsReceived };
}

const clientHello = Buffer.from([22, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
const stun = Buffer.from([0, 1, 0, 0, 0x21, 0x12, 0xa4, 0x42]);
const nextTurn = () => new Promise((r) => setImmediate(r));

describe('keepEarlyDtls', () => {
  it('hands the DTLS endpoint the records that arrived before it listened, once, in order', async () => {
    const { pc, onData, startDtls, dtlsReceived } = peer();
    keepEarlyDtls(pc);
    keepEarlyDtls(pc); // a renegotiation: the same transport is not watched twice
    const second = Buffer.from(clientHello);
    second[13] = 2;
    onData.execute(stun);
    onData.execute(clientHello);
    onData.execute(second);
    startDtls();
    // At once, before anything that arrives later: no I/O can come between.
    await Promise.resolve();
    expect(dtlsReceived).toEqual([clientHello, second]);
    // From then on records go straight through, not kept again.
    const later = Buffer.from([23, 0xfe, 0xfd]);
    onData.execute(later);
    await nextTurn();
    expect(dtlsReceived).toEqual([clientHello, second, later]);
  });

  it('keeps at most 16 records', async () => {
    const { pc, onData, startDtls, dtlsReceived } = peer();
    keepEarlyDtls(pc);
    for (let i = 0; i < 100; i++) onData.execute(clientHello);
    startDtls();
    await nextTurn();
    expect(dtlsReceived.length).toBe(16);
  });
});
