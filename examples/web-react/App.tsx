// SPDX-License-Identifier: Apache-2.0
// A tiny React app around <VisageAvatar>: it joins a `mode: "client"` session's room with its
// LiveKit URL and participant token (from the page's query or a form), plays the avatar's voice
// and draws its face.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Room, RoomEvent, Track, type RemoteTrack } from 'livekit-client';
import { VisageAvatar } from './VisageAvatar.js';

export interface Join {
  /** The session's `livekit_url`, `participant_token` and `atlas_url`. */
  url: string;
  token: string;
  atlasUrl?: string;
}

export function App({ initial }: { initial: Partial<Join> }) {
  const [join, setJoin] = useState<Join | undefined>(
    initial.url && initial.token ? (initial as Join) : undefined,
  );
  if (join) return <Session {...join} />;
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const atlasUrl = String(form.get('atlas') ?? '');
    setJoin({
      url: String(form.get('url')),
      token: String(form.get('token')),
      atlasUrl: atlasUrl || undefined,
    });
  };
  return (
    <form onSubmit={submit}>
      <label>
        LiveKit URL <input name="url" required defaultValue={initial.url} />
      </label>
      <label>
        Participant token <input name="token" required defaultValue={initial.token} />
      </label>
      <label>
        Atlas URL (optional) <input name="atlas" defaultValue={initial.atlasUrl} />
      </label>
      <button>Join</button>
    </form>
  );
}

/** One room for one join: the avatar drawn, the voice played. */
function Session({ url, token, atlasUrl }: Join) {
  const [session, setSession] = useState<{ room: Room; url: string; token: string }>();
  const [status, setStatus] = useState('Connecting…');
  const [blocked, setBlocked] = useState(false);
  const voices = useRef<HTMLDivElement>(null);

  // A Room per URL and token, left when they change or the app unmounts.
  useEffect(() => {
    const room = new Room();
    // The voice is a normal LiveKit audio track: play it as any other.
    room.on(RoomEvent.TrackSubscribed, (track: RemoteTrack) => {
      if (track.kind === Track.Kind.Audio) voices.current?.appendChild(track.attach());
    });
    room.on(RoomEvent.TrackUnsubscribed, (track: RemoteTrack) => {
      for (const element of track.detach()) element.remove();
    });
    // A browser that blocks sound until the user acts: a button that starts it.
    room.on(RoomEvent.AudioPlaybackStatusChanged, () => setBlocked(!room.canPlaybackAudio));
    let current = true; // not after this effect's cleanup left the room itself
    room.on(RoomEvent.Disconnected, () => {
      if (current) setStatus('Left the room (the session ended, or the connection was lost).');
    });
    setSession({ room, url, token });
    return () => {
      current = false;
      void room.disconnect();
    };
  }, [url, token]);

  // Connects once <VisageAvatar> below is mounted on the room: a parent's effects run after its
  // children's, so the avatar listens for its face stream before the join.
  useEffect(() => {
    if (!session) return;
    session.room
      .connect(session.url, session.token)
      .then(() =>
        setStatus((s) => (s === 'Connecting…' ? 'Connected; waiting for the avatar…' : s)),
      )
      .catch((err: unknown) => setStatus(`Failed: ${err instanceof Error ? err.message : err}`));
  }, [session]);

  if (!session) return null;
  return (
    <>
      <p id="status">{status}</p>
      {blocked && <button onClick={() => void session.room.startAudio()}>Play the voice</button>}
      <VisageAvatar
        room={session.room}
        atlasUrl={atlasUrl}
        onReady={() => setStatus('The avatar is drawn in this page.')}
        onError={(err) => setStatus(`The avatar cannot be drawn: ${String(err)}`)}
        style={{ width: 512, maxWidth: '100%', background: '#222' }}
      />
      <div ref={voices} hidden />
    </>
  );
}
