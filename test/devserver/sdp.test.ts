// SPDX-License-Identifier: GPL-3.0-or-later
import { RTCPeerConnection, SessionDescription } from 'werift';
import { describe, expect, it } from 'vitest';
import {
  acceptInactiveSections,
  answerOpusDtx,
  parseOfferedMedia,
} from '../../src/devserver/rtc/sdp.js';

/** The transport lines every section of a browser's offer carries. */
const transport = [
  'a=ice-ufrag:Ab3x',
  'a=ice-pwd:aaaaaaaaaaaaaaaaaaaaaaaa',
  'a=fingerprint:sha-256 00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF',
  'a=setup:actpass',
];

const offer = [
  'v=0',
  'o=- 1 2 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'a=group:BUNDLE 0 1 2 3',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111',
  'c=IN IP4 0.0.0.0',
  ...transport,
  'a=mid:0',
  'a=recvonly',
  'a=rtpmap:111 opus/48000/2',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111',
  'c=IN IP4 0.0.0.0',
  ...transport,
  'a=mid:1',
  'a=sendonly',
  'a=msid:- TR_cid_audio',
  'a=rtpmap:111 opus/48000/2',
  'm=video 0 UDP/TLS/RTP/SAVPF 96',
  'c=IN IP4 0.0.0.0',
  ...transport,
  'a=mid:2',
  'a=inactive',
  'a=rtpmap:96 VP8/90000',
  'm=application 9 UDP/DTLS/SCTP webrtc-datachannel',
  'c=IN IP4 0.0.0.0',
  ...transport,
  'a=mid:3',
  'a=sctp-port:5000',
  '',
].join('\r\n');

/** An offer and werift's own answer to it: recvonly sections answered with port 0. */
async function weriftAnswer(): Promise<{ offer: string; answer: string }> {
  const a = new RTCPeerConnection();
  const b = new RTCPeerConnection();
  try {
    a.addTransceiver('audio', { direction: 'recvonly' });
    a.addTransceiver('audio', { direction: 'sendonly' });
    a.addTransceiver('video', { direction: 'recvonly' });
    a.createDataChannel('data');
    await a.setLocalDescription(await a.createOffer());
    await b.setRemoteDescription(a.localDescription!);
    await b.setLocalDescription(await b.createAnswer());
    return { offer: a.localDescription!.sdp, answer: b.localDescription!.sdp };
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

describe('publisher SDP handling (through werift’s parser)', () => {
  it('reads mids, directions, msid track ids and rejection from an offer', () => {
    expect(parseOfferedMedia(offer)).toEqual([
      { mid: '0', kind: 'audio', trackId: undefined, direction: 'recvonly', rejected: false },
      { mid: '1', kind: 'audio', trackId: 'TR_cid_audio', direction: 'sendonly', rejected: false },
      { mid: '2', kind: 'video', trackId: undefined, direction: 'inactive', rejected: true },
      { mid: '3', kind: 'application', trackId: undefined, direction: 'sendrecv', rejected: false },
    ]);
  });

  it('accepts sections the offer did not reject as inactive and bundles only live mids', async () => {
    const real = await weriftAnswer();
    const before = SessionDescription.parse(real.answer);
    // What werift does: the recvonly offers (mids 0 and 2) answered rejected, still bundled.
    expect(before.media.map((m) => m.port)).toEqual([0, 9, 0, 9]);
    expect(before.group.find((g) => g.semantic === 'BUNDLE')!.items).toEqual(['0', '1', '2', '3']);

    const fixed = SessionDescription.parse(acceptInactiveSections(real.answer, real.offer));
    expect(fixed.media.map((m) => [m.rtp.muxId, m.port, m.direction])).toEqual([
      ['0', 9, 'inactive'],
      ['1', 9, 'recvonly'],
      ['2', 9, 'inactive'],
      ['3', 9, undefined],
    ]);
    expect(fixed.group.find((g) => g.semantic === 'BUNDLE')!.items).toEqual(['0', '1', '2', '3']);
  });

  it('leaves a section the offer rejected rejected, and out of the bundle', async () => {
    const real = await weriftAnswer();
    // The offer stops mid 2 (port 0), as a client that unpublished a track does.
    const stopped = real.offer.replace(/^m=video 9 /m, 'm=video 0 ');
    const fixed = SessionDescription.parse(acceptInactiveSections(real.answer, stopped));
    expect(fixed.media.map((m) => m.port)).toEqual([9, 9, 0, 9]);
    expect(fixed.group.find((g) => g.semantic === 'BUNDLE')!.items).toEqual(['0', '1', '3']);
  });

  it('turns Opus DTX on for a track that allows it and off for one that does not, as LiveKit', () => {
    // An answer to `offer` as the server writes it: Opus in both audio sections.
    const answer = offer
      .replace(/a=setup:actpass/g, 'a=setup:passive')
      .replace(/a=rtpmap:111 opus\/48000\/2/g, '$&\r\na=fmtp:111 minptime=10;useinbandfec=1');
    const opusParams = (sdp: string) =>
      SessionDescription.parse(sdp).media.map(
        (m) => m.rtp.codecs.find((c) => c.mimeType.toLowerCase() === 'audio/opus')?.parameters,
      );
    const on = answerOpusDtx(answer, offer, (trackId) =>
      trackId === 'TR_cid_audio' ? true : undefined,
    );
    expect(opusParams(on).slice(0, 2)).toEqual([
      // The recvonly section carries no track: left as it was.
      'minptime=10;useinbandfec=1',
      'minptime=10;useinbandfec=1;usedtx=1',
    ]);
    // A track published with `dtx: false` (disableDtx): the parameter goes.
    const off = answerOpusDtx(on, offer, (trackId) =>
      trackId === 'TR_cid_audio' ? false : undefined,
    );
    expect(opusParams(off)[1]).toBe('minptime=10;useinbandfec=1');
    // A track the server does not know: the answer is untouched.
    expect(answerOpusDtx(answer, offer, () => undefined)).toBe(answer);
  });

  it('replaces a usedtx the answer already carries, whatever its value and spacing', () => {
    const answer = offer
      .replace(/a=setup:actpass/g, 'a=setup:passive')
      .replace(/a=rtpmap:111 opus\/48000\/2/g, '$&\r\na=fmtp:111 minptime=10; usedtx=0');
    const opusParams = (sdp: string) =>
      SessionDescription.parse(sdp).media[1]!.rtp.codecs.find(
        (c) => c.mimeType.toLowerCase() === 'audio/opus',
      )?.parameters;
    const dtx = (on: boolean) => (trackId: string | undefined) =>
      trackId === 'TR_cid_audio' ? on : undefined;
    expect(opusParams(answerOpusDtx(answer, offer, dtx(true)))).toBe('minptime=10;usedtx=1');
    expect(opusParams(answerOpusDtx(answer, offer, dtx(false)))).toBe('minptime=10');
  });
});
