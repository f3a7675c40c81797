// SPDX-License-Identifier: GPL-3.0-or-later
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
const tracks: RemoteTrack[] = [];

export interface InboundStats {
  kind: string;
  packetsReceived: number;
  packetsLost: number;
  framesDecoded: number;
  audioLevel: number;
}

/** The browser's own receive statistics (inbound-rtp) for every subscribed track. */
async function inbound(): Promise<InboundStats[]> {
  const found: InboundStats[] = [];
  for (const track of tracks) {
    const report = await track.getRTCStatsReport();
    report?.forEach((entry: Record<string, unknown>) => {
      if (entry.type !== 'inbound-rtp') return;
      found.push({
        kind: String(entry.kind),
        packetsReceived: Number(entry.packetsReceived ?? 0),
        packetsLost: Number(entry.packetsLost ?? 0),
        framesDecoded: Number(entry.framesDecoded ?? 0),
        audioLevel: Number(entry.audioLevel ?? 0),
      });
    });
  }
  return found;
}

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
    tracks.push(track);
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

Object.assign(window, { visage: { join, state, inbound } });
