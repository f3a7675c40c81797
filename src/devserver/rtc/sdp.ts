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

export function parseOfferedMedia(sdp: string): OfferedMedia[] {
  const sections = sdp.split(/\r?\n(?=m=)/).slice(1);
  return sections.map((section) => {
    const lines = section.split(/\r?\n/);
    const [, kind = '', port = '0'] = /^m=(\S+) (\d+)/.exec(lines[0] ?? '') ?? [];
    let mid = '';
    let trackId: string | undefined;
    let direction = 'sendrecv';
    for (const line of lines) {
      if (line.startsWith('a=mid:')) mid = line.slice(6).trim();
      else if (line.startsWith('a=msid:')) trackId = line.slice(7).trim().split(/\s+/)[1];
      else if (/^a=(sendrecv|sendonly|recvonly|inactive)$/.test(line)) direction = line.slice(2);
    }
    return { mid, kind, trackId, direction, rejected: port === '0' };
  });
}

/**
 * werift answers every section it has nothing to do with (recvonly offers: the transceivers the
 * SDKs pre-create, or a track the client just unpublished) with port 0, i.e. rejects it, and
 * keeps rejected mids in the BUNDLE group. libwebrtc then either never connects (a rejected mid
 * first in the group) or moves the bundle to a new transport that never connects (the
 * bundle-tag section rejected in a renegotiation: all media stops). So accept those sections
 * as `inactive` with a real port, and bundle exactly the sections that are not rejected.
 */
export function acceptInactiveSections(answerSdp: string, offerSdp: string): string {
  const offered = parseOfferedMedia(offerSdp);
  const [session = '', ...sections] = answerSdp.split(/\r?\n(?=m=)/);
  const eol = answerSdp.includes('\r\n') ? '\r\n' : '\n';
  const bundled: string[] = [];
  const fixed = sections.map((section, index) => {
    const offer = offered[index];
    let result = section;
    if (offer && !offer.rejected && /^m=\S+ 0 /.test(section)) {
      result = section.replace(/^(m=\S+) 0 /, '$1 9 ');
    }
    const mid = /\ba=mid:(\S+)/.exec(result)?.[1];
    if (mid !== undefined && !/^m=\S+ 0 /.test(result)) bundled.push(mid);
    return result;
  });
  const newSession = session.replace(
    /^a=group:BUNDLE [^\r\n]*/m,
    `a=group:BUNDLE ${bundled.join(' ')}`,
  );
  return [newSession, ...fixed].join(eol);
}
