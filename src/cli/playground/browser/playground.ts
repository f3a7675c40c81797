// SPDX-License-Identifier: GPL-3.0-or-later
// The playground's page script (runs in the browser; bundled with livekit-client by
// playgroundBundle.ts, so the page needs no network beyond this machine). It asks the dev server
// for a participant token for a fresh room, joins it (which dispatches the developer's agent
// worker), shows the avatar that publishes on the agent's behalf, the agent's state
// (`lk.agent.state`), and the conversation from the agent's `lk.transcription` text streams; what
// the developer types goes to the agent as `lk.chat` text, and the microphone can be turned on.
// The face control asks the agent for a video, or for the face drawn here, on a canvas, by
// @visage-avatar/web from the avatar's `visage.face` stream (`client` mode: no video at all).
import { VisageAvatar } from '@visage-avatar/web';
import {
  type Participant,
  type RemoteTrack,
  Room,
  RoomEvent,
  type TextStreamReader,
  Track,
} from 'livekit-client';

/** One line of the conversation; the agent's grow word by word while the avatar says them. */
interface Line {
  id: string;
  who: 'You' | 'Agent';
  text: string;
  done: boolean;
}

/** What tests (and a curious developer in the console) can read: `window.playground`. */
interface PlaygroundState {
  lines: Line[];
  /** The agent's `lk.agent.state`, every value in order. */
  states: string[];
  /** The face asked for when the page joined: `video` or `client` (drawn in the browser). */
  face?: 'video' | 'client';
  room?: Room;
  /** In `client` mode, what draws the avatar on the canvas. */
  avatar?: VisageAvatar;
}

const STATE_ATTRIBUTE = 'lk.agent.state';
const ON_BEHALF_ATTRIBUTE = 'lk.publish_on_behalf';
/** How long after joining the page says that no agent came, and what to check. */
const NO_AGENT_HINT_MS = 20_000;

const element = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const startButton = element<HTMLButtonElement>('start');
const micButton = element<HTMLButtonElement>('mic');
const statusLine = element<HTMLElement>('status');
const stateLine = element<HTMLElement>('state');
const video = element<HTMLVideoElement>('avatar');
const canvas = element<HTMLCanvasElement>('drawn');
const faceChoice = element<HTMLSelectElement>('face');
const transcript = element<HTMLElement>('transcript');
const chat = element<HTMLFormElement>('chat');
const input = element<HTMLInputElement>('text');

const playground: PlaygroundState = { lines: [], states: [] };
(window as unknown as { playground: PlaygroundState }).playground = playground;
let room: Room | undefined;

const status = (text: string) => (statusLine.textContent = text);

function render() {
  transcript.replaceChildren(
    ...playground.lines.map((l) => {
      const row = document.createElement('div');
      row.className = l.done ? 'line' : 'line speaking';
      const who = document.createElement('span');
      who.className = 'who';
      who.textContent = `${l.who}:`;
      row.append(who, document.createTextNode(` ${l.text.trim()}`));
      return row;
    }),
  );
  transcript.scrollTop = transcript.scrollHeight;
}

function line(id: string, who: Line['who']): Line {
  let l = playground.lines.find((x) => x.id === id);
  if (!l) {
    l = { id, who, text: '', done: false };
    playground.lines.push(l);
  }
  return l;
}

function showState(participant: Participant) {
  const state = participant.attributes[STATE_ATTRIBUTE];
  if (!state || playground.states.at(-1) === state) return;
  playground.states.push(state);
  stateLine.textContent = state;
  stateLine.dataset.state = state;
}

/** Whose words a transcription stream carries: the user's own (their speech, by an STT). */
function spokenByMe(identity: string, attributes: Record<string, string>): boolean {
  if (!room) return false;
  const local = room.localParticipant;
  if (identity === local.identity) return true;
  const track = attributes['lk.transcribed_track_id'];
  return track !== undefined && local.trackPublications.has(track);
}

async function readTranscription(reader: TextStreamReader, identity: string) {
  const attributes = reader.info.attributes ?? {};
  const who = spokenByMe(identity, attributes) ? 'You' : 'Agent';
  const l = line(attributes['lk.segment_id'] ?? reader.info.id, who);
  // A delta stream grows the line as the avatar says each word; the final one carries exactly
  // what was heard (up to where the user interrupted), and replaces the deltas.
  const final = attributes['lk.transcription_final'] === 'true';
  let text = '';
  for await (const chunk of reader) {
    text += chunk;
    if (!final) {
      l.text += chunk;
      render();
    }
  }
  if (final) {
    l.text = text;
    l.done = true;
  }
  render();
}

async function start() {
  startButton.disabled = true;
  faceChoice.disabled = true;
  status('Getting a token for a new room…');
  const agent = new URLSearchParams(location.search).get('agent') ?? undefined;
  const face = faceChoice.value === 'client' ? 'client' : 'video';
  playground.face = face;
  const answer = await fetch('/playground/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...(agent && { agent }), face }),
  });
  const body = (await answer.json()) as { livekit_url: string; token: string; error?: string };
  if (!answer.ok) throw new Error(body.error ?? `the token request answered ${answer.status}`);
  // The avatar service needs adaptive stream and dynacast off (it publishes one layer).
  room = new Room({ adaptiveStream: false, dynacast: false });
  playground.room = room;
  if (face === 'client') {
    // Before connecting: the avatar opens a face stream for each participant who joins. The
    // atlas's URL comes in the stream's `start` line (signed by the service: no key here).
    video.hidden = true;
    canvas.hidden = false;
    playground.avatar = new VisageAvatar({ room, canvas });
    playground.avatar.ready.catch((err: unknown) => failed(err));
  }
  room.on(RoomEvent.ParticipantConnected, (p) => {
    if (p.attributes[ON_BEHALF_ATTRIBUTE]) status('The avatar joined.');
    else if (p.isAgent) status('Your agent joined; its avatar is coming.');
    showState(p);
  });
  room.on(RoomEvent.ParticipantAttributesChanged, (_changed, p) => showState(p));
  room.on(RoomEvent.TrackSubscribed, (track: RemoteTrack) => {
    if (track.kind === Track.Kind.Video) {
      track.attach(video);
      if (face === 'client') {
        // The agent's plugin did not take the page's ask (it sets `face`, or is older): show what
        // it sends, and say so.
        video.hidden = false;
        canvas.hidden = true;
        status(
          "Your agent's avatar sends video: for a face drawn here, leave AvatarSession's `face` " +
            "option unset (it then takes the page's ask) or set it to 'client' " +
            '(see docs/playground.md).',
        );
      }
    }
    if (track.kind === Track.Kind.Audio) document.body.appendChild(track.attach());
  });
  room.on(RoomEvent.Disconnected, () => {
    status('Disconnected. Reload the page for a new room.');
    micButton.disabled = true;
  });
  room.registerTextStreamHandler('lk.transcription', (reader, { identity }) => {
    // A stream cut by leaving the room ends the line where it was.
    void readTranscription(reader, identity).catch(() => undefined);
  });
  status('Connecting… (your agent is dispatched when you join)');
  await room.connect(body.livekit_url, body.token);
  for (const p of room.remoteParticipants.values()) showState(p);
  status('Connected; waiting for your agent.');
  micButton.disabled = false;
  input.disabled = false;
  // Nothing joins a room when no worker is registered: say what to check rather than wait.
  setTimeout(() => {
    const joined = [...(room?.remoteParticipants.values() ?? [])].some((p) => p.isAgent);
    if (room?.state === 'connected' && !joined) {
      status(
        'No agent joined yet. Is your worker running (`… dev`) with LIVEKIT_URL ' +
          `${body.livekit_url} and this server's key (\`visage dev --print-livekit-credentials\`)?`,
      );
    }
  }, NO_AGENT_HINT_MS);
}

async function toggleMicrophone() {
  if (!room) return;
  const on = !room.localParticipant.isMicrophoneEnabled;
  await room.localParticipant.setMicrophoneEnabled(on);
  micButton.textContent = on ? 'Turn the microphone off' : 'Turn the microphone on';
  micButton.dataset.on = String(on);
}

async function send(event: SubmitEvent) {
  event.preventDefault();
  const text = input.value.trim();
  input.value = '';
  if (!room || !text) return;
  playground.lines.push({ id: `typed-${playground.lines.length}`, who: 'You', text, done: true });
  render();
  // agents-js reads `lk.chat` text streams as the user's turn (RoomIO's text input).
  await room.localParticipant.sendText(text, { topic: 'lk.chat' });
}

const failed = (err: unknown) => {
  status(`Failed: ${err instanceof Error ? err.message : String(err)}`);
};
startButton.addEventListener('click', () => void start().catch(failed));
micButton.addEventListener('click', () => void toggleMicrophone().catch(failed));
chat.addEventListener('submit', (ev) => void send(ev).catch(failed));
window.addEventListener('pagehide', () => void room?.disconnect());
