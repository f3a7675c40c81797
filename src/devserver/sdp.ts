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
 * werift rejects the recvonly m-lines that libwebrtc SDKs pre-create (port 0) but keeps their
 * mids in the BUNDLE group, sometimes first; libwebrtc then never connects the transport.
 * Keep only the accepted mids in the group.
 */
export function removeRejectedFromBundle(answerSdp: string): string {
  const rejected = new Set(
    parseOfferedMedia(answerSdp)
      .filter((m) => m.rejected)
      .map((m) => m.mid),
  );
  if (rejected.size === 0) return answerSdp;
  return answerSdp.replace(/^a=group:BUNDLE ([^\r\n]*)/m, (_line, mids: string) => {
    const kept = mids.split(/\s+/).filter((mid) => mid && !rejected.has(mid));
    return `a=group:BUNDLE ${kept.join(' ')}`;
  });
}
