// Runs in headless Chromium (bundled with livekit-client as an IIFE by the browser test): joins a
// room with the official browser SDK and shows every subscribed video in a fixed-size <video>.
import { Room, RoomEvent, Track, type RemoteTrack } from 'livekit-client';

export interface PageState {
  connected: boolean;
  subscribed: { kind: string; participant: string; mime: string }[];
  /** Video frames the <video> element presented (requestVideoFrameCallback). */
  framesPresented: number;
  errors: string[];
}

const state: PageState = { connected: false, subscribed: [], framesPresented: 0, errors: [] };

function countFrames(video: HTMLVideoElement): void {
  const next = () =>
    video.requestVideoFrameCallback(() => {
      state.framesPresented++;
      next();
    });
  next();
}

function show(track: RemoteTrack): void {
  const element = track.attach();
  if (element instanceof HTMLVideoElement) {
    element.id = 'remote-video';
    element.muted = true;
    element.width = 640;
    element.height = 480;
    element.style.cssText = 'width:640px;height:480px;background:#000;display:block';
    countFrames(element);
  }
  document.body.appendChild(element);
}

async function join(url: string, token: string): Promise<void> {
  // The SDK's defaults otherwise; adaptive stream would pause video it thinks is hidden.
  const room = new Room({ adaptiveStream: false, dynacast: false });
  room.on(RoomEvent.TrackSubscribed, (track, publication, participant) => {
    state.subscribed.push({
      kind: track.kind === Track.Kind.Video ? 'video' : 'audio',
      participant: participant.identity,
      mime: publication.mimeType ?? '',
    });
    show(track);
  });
  room.on(RoomEvent.Disconnected, () => (state.connected = false));
  try {
    await room.connect(url, token);
    state.connected = true;
  } catch (err) {
    state.errors.push(String(err));
    throw err;
  }
  (window as unknown as { room: Room }).room = room;
}

Object.assign(window, { visage: { join, state } });
