// SPDX-License-Identifier: GPL-3.0-or-later
import { pino } from 'pino';
import { MediaStreamTrack, RTCPeerConnection } from 'werift';
import { afterEach, describe, expect, it } from 'vitest';
import { PublisherPeer } from '../../src/devserver/rtc/publisherPeer.js';

// The SDP exchange only: nothing connects (ICE on loopback is gathered, never used).
describe("the publisher side: a track added in a later offer, after the SDKs' pre-created recvonly sections", () => {
  const closing: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });

  it('gets its own transceiver and is announced, the earlier sections keep theirs', async () => {
    const announced: string[] = [];
    const server = new PublisherPeer(
      { nodeIp: '127.0.0.1' },
      {
        onCandidate: () => undefined,
        onTrack: (track, transceiver) => announced.push(`${transceiver.mid}:${track.kind}`),
        onMediaEnded: () => undefined,
        onData: () => undefined,
        onStateChange: () => undefined,
        dtxFor: () => undefined,
      },
      pino({ level: 'silent' }),
    );
    // Like rtc-node's publisher: recvonly audio and video sections first, then the tracks.
    const client = new RTCPeerConnection({ iceServers: [], bundlePolicy: 'max-bundle' });
    closing.push(
      () => client.close(),
      () => server.close(),
    );
    for (const kind of ['audio', 'audio', 'audio', 'video', 'video', 'video'] as const) {
      client.addTransceiver(kind, { direction: 'recvonly' });
    }
    client.addTransceiver(new MediaStreamTrack({ kind: 'audio' }), { direction: 'sendonly' });
    client.createDataChannel('_reliable');
    const negotiate = async () => {
      await client.setLocalDescription(await client.createOffer());
      const answer = await server.handleOffer(client.localDescription!.sdp);
      await client.setRemoteDescription({ type: 'answer', sdp: answer });
      return answer;
    };
    // The server answers as the DTLS server: the SDK's first ClientHello starts the handshake
    // (earlyDtls.ts), where as the client werift would wait 100 ms before its own.
    const roles = (await negotiate()).match(/^a=setup:\w+/gm) ?? [];
    expect(roles.length).toBeGreaterThan(0);
    expect(new Set(roles)).toEqual(new Set(['a=setup:passive']));
    // libwebrtc never reuses those sections for a new track: a new section comes after them.
    for (const t of client.getTransceivers()) t.usedForSender = true;
    client.addTransceiver(new MediaStreamTrack({ kind: 'video' }), { direction: 'sendonly' });
    // werift alone recycled an inactive transceiver for it: "Transceiver with mid=0 not found".
    await negotiate();
    await expect.poll(() => announced.sort(), { timeout: 5_000 }).toEqual(['6:audio', '8:video']);
    const mids = server.pc.getTransceivers().map((t) => t.mid);
    expect(mids).toEqual(['0', '1', '2', '3', '4', '5', '6', '8']);
  });
});
