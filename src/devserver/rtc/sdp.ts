// SPDX-License-Identifier: GPL-3.0-or-later
import { SessionDescription } from 'werift';

/** What the server needs from one m-section of a publisher's offer. */
export interface OfferedMedia {
  mid: string;
  kind: string;
  /** The msid track id: the SDKs put the AddTrackRequest `cid` here. */
  trackId?: string;
  direction: string;
  /** Port 0 means the section was rejected or stopped. */
  rejected: boolean;
}

/** The offer's m-sections, read with werift's SDP parser. */
export function parseOfferedMedia(sdp: string): OfferedMedia[] {
  return SessionDescription.parse(sdp).media.map((m) => ({
    mid: m.rtp.muxId ?? '',
    kind: m.kind,
    // `a=msid:<stream id> <track id>`
    trackId: m.msid?.split(/\s+/)[1],
    direction: m.direction ?? 'sendrecv',
    rejected: m.port === 0,
  }));
}

/**
 * werift answers every section it has nothing to do with (recvonly offers: the transceivers the
 * SDKs pre-create, or a track the client just unpublished) with port 0, i.e. rejects it, and
 * keeps rejected mids in the BUNDLE group. libwebrtc then either never connects (a rejected mid
 * first in the group) or moves the bundle to a new transport that never connects (the
 * bundle-tag section rejected in a renegotiation: all media stops). So accept those sections
 * as `inactive` with a real port, and bundle exactly the sections that are not rejected. The
 * answer is werift's own, so its parser reads all of it and its writer gives it back whole.
 */
export function acceptInactiveSections(answerSdp: string, offerSdp: string): string {
  const offered = parseOfferedMedia(offerSdp);
  const answer = SessionDescription.parse(answerSdp);
  answer.media.forEach((m, index) => {
    const offer = offered[index];
    if (offer && !offer.rejected && m.port === 0) m.port = 9;
  });
  const bundled = answer.media.filter((m) => m.port !== 0).map((m) => m.rtp.muxId ?? '');
  for (const group of answer.group) if (group.semantic === 'BUNDLE') group.items = bundled;
  return answer.string;
}

/**
 * Turns Opus DTX on or off in the answer's audio sections, as LiveKit does (participant_sdp.go):
 * `usedtx=1` in the Opus fmtp of each section whose track allows it (no `disableDtx` in its
 * AddTrackRequest), removed where it does not. It is the answer that tells the publisher's
 * encoder; the SDKs' `dtx` publish option only reaches the server. Without it an audio track
 * sends 50 packets a second of silence whenever nothing is said (an unwatched avatar's whole
 * remaining cost, issue 47). Sections whose track is unknown are left as they are.
 */
export function answerOpusDtx(
  answerSdp: string,
  offerSdp: string,
  dtxFor: (trackId: string | undefined) => boolean | undefined,
): string {
  const offered = parseOfferedMedia(offerSdp);
  const answer = SessionDescription.parse(answerSdp);
  let changed = false;
  answer.media.forEach((m, index) => {
    const offer = offered[index];
    if (m.kind !== 'audio' || !offer || offer.rejected) return;
    const dtx = dtxFor(offer.trackId);
    if (dtx === undefined) return;
    for (const codec of m.rtp.codecs) {
      if (codec.mimeType.toLowerCase() !== 'audio/opus') continue;
      // Any `usedtx` value the answer took over (a browser may offer `usedtx=0`) is replaced,
      // and `a; b` spacing (RFC 4566 allows it) does not hide one.
      const params = (codec.parameters ?? '')
        .split(';')
        .map((p) => p.trim())
        .filter((p) => p && p.split('=')[0]!.trim().toLowerCase() !== 'usedtx');
      if (dtx) params.push('usedtx=1');
      codec.parameters = params.join(';');
      changed = true;
    }
  });
  return changed ? answer.string : answerSdp;
}
