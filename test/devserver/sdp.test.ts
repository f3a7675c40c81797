import { describe, expect, it } from 'vitest';
import { acceptInactiveSections, parseOfferedMedia } from '../../src/devserver/rtc/sdp.js';

const offer = [
  'v=0',
  'o=- 1 2 IN IP4 127.0.0.1',
  's=-',
  'a=group:BUNDLE 0 1 2 3',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111',
  'a=mid:0',
  'a=recvonly',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111',
  'a=mid:1',
  'a=sendonly',
  'a=msid:- TR_cid_audio',
  'm=video 0 UDP/TLS/RTP/SAVPF 96',
  'a=mid:2',
  'a=inactive',
  'm=application 9 UDP/DTLS/SCTP webrtc-datachannel',
  'a=mid:3',
  '',
].join('\r\n');

// What werift answers: the recvonly section and the offer-rejected one with port 0.
const answer = [
  'v=0',
  'o=- 3 4 IN IP4 0.0.0.0',
  's=-',
  'a=group:BUNDLE 0 1 2 3',
  'm=audio 0 UDP/TLS/RTP/SAVPF 111',
  'a=inactive',
  'a=mid:0',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111',
  'a=recvonly',
  'a=mid:1',
  'm=video 0 UDP/TLS/RTP/SAVPF 96',
  'a=inactive',
  'a=mid:2',
  'm=application 9 UDP/DTLS/SCTP webrtc-datachannel',
  'a=mid:3',
  '',
].join('\r\n');

describe('publisher SDP handling', () => {
  it('reads mids, directions, msid track ids and rejection from an offer', () => {
    expect(parseOfferedMedia(offer)).toEqual([
      { mid: '0', kind: 'audio', trackId: undefined, direction: 'recvonly', rejected: false },
      { mid: '1', kind: 'audio', trackId: 'TR_cid_audio', direction: 'sendonly', rejected: false },
      { mid: '2', kind: 'video', trackId: undefined, direction: 'inactive', rejected: true },
      { mid: '3', kind: 'application', trackId: undefined, direction: 'sendrecv', rejected: false },
    ]);
  });

  it('accepts sections the offer did not reject as inactive and bundles only live mids', () => {
    const fixed = acceptInactiveSections(answer, offer);
    expect(fixed).toContain('a=group:BUNDLE 0 1 3\r\n');
    expect(fixed).toContain('m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=inactive\r\na=mid:0');
    expect(fixed).toContain('m=video 0 UDP/TLS/RTP/SAVPF 96');
    expect(fixed.split('\r\n')).toHaveLength(answer.split('\r\n').length);
  });
});
