// SPDX-License-Identifier: GPL-3.0-or-later
// A page that draws a `client` mode session's avatar with @visage-avatar/web, as a frontend
// would (bundled with livekit-client by visageAvatar.slow.test.ts), and records at every animation
// frame what a test reads: the drawn mouth's openness measured from the canvas's pixels, the
// openness of the face line drawn, and the loudness of the received voice through a WebAudio
// analyser (what the page plays).
import { Room, RoomEvent, Track, type RemoteTrack } from 'livekit-client';
import { VisageAvatar } from '../../../packages/web/src/index.js';
import { mouthOpening } from './mouthOpening.js';

export interface Sample {
  /** performance.now() of the animation frame. */
  at: number;
  /** The drawn mouth's opening, measured on the canvas (share of dark pixels in its region). */
  pixelOpen: number;
  /** The `open` of the face line drawn. */
  lineOpen: number;
  /** RMS of the received voice over the analyser's window (0 before it plays). */
  rms: number;
  /**
   * performance.now() of the middle of that window: the analyser holds the last `fftSize` samples
   * the audio graph rendered (21 ms), so its loudness is that of the sound of about 11 ms ago.
   */
  heardAt: number;
  clock: string;
  /**
   * The playout clock's parts: the batches' offset less transit, the jitter buffer's delay, the
   * audio output's delay (`media-playout` statistics), the sender's packets and codec.
   */
  arrival?: number;
  jitter?: number;
  /** The RTP clock's offset from the sender's (undefined until placed). */
  rtp?: number;
  output: number;
  sender: number;
  /** The `visage.face` stream's bytes received so far (UTF-8 text of its chunks). */
  faceBytes: number;
  /** All the data channels' bytes received so far (every stream, framing and all), read every 250 ms. */
  dataBytes: number;
  /** The face stream's bytes so far by message type (`face`, `words`, ...), and its `face` lines and their distinct times. */
  bytesByType: Record<string, number>;
  faceLines: number;
  faceTimes: number;
}

export interface PageState {
  samples: Sample[];
  /** performance.now() when the avatar's audio track was subscribed, and when the face was drawn. */
  audioAt?: number;
  readyAt?: number;
  error?: string;
}

const state: PageState = { samples: [] };
const FACE_TOPIC = 'visage.face';
let dataBytes = 0;
// Every peer connection the SDK makes, for its data channels' statistics.
const peerConnections: RTCPeerConnection[] = [];
const NativePeerConnection = window.RTCPeerConnection;
window.RTCPeerConnection = class extends NativePeerConnection {
  constructor(config?: RTCConfiguration) {
    super(config);
    peerConnections.push(this);
  }
};
setInterval(() => {
  void Promise.all(peerConnections.map((pc) => pc.getStats())).then((reports) => {
    let total = 0;
    for (const report of reports) {
      report.forEach((s: { type: string; bytesReceived?: number }) => {
        if (s.type === 'data-channel') total += s.bytesReceived ?? 0;
      });
    }
    dataBytes = total;
  });
}, 250);
let avatar: VisageAvatar | undefined;
let faceBytes = 0;
const bytesByType: Record<string, number> = {};
let faceLines = 0;
const faceTimes = new Set<number>();
/** Counts a chunk's lines by type (every chunk holds whole lines). */
function countLines(chunk: string): void {
  for (const line of chunk.split('\n')) {
    if (line === '') continue;
    const message = JSON.parse(line) as { type: string; t?: number };
    bytesByType[message.type] = (bytesByType[message.type] ?? 0) + line.length + 1;
    if (message.type === 'face') {
      faceLines++;
      faceTimes.add(message.t!);
    }
  }
}
const w = window as unknown as {
  visageTest: PageState;
  startAvatar: (url: string, token: string, atlasUrl: string) => Promise<void>;
  canvasLuma: () => number[];
  neutralCanvasRgb: () => Promise<number[]>;
};
w.visageTest = state;

w.startAvatar = async (url, token, atlasUrl) => {
  const canvas = document.querySelector('canvas')!;
  const room = new Room();
  // Counts the face stream's bytes as they reach the package: its handler reads a reader that
  // passes the stream's chunks on, counted.
  const register = room.registerTextStreamHandler.bind(room);
  room.registerTextStreamHandler = (topic, handler) =>
    register(topic, (reader, from) => {
      const counted = Object.create(reader) as typeof reader;
      counted[Symbol.asyncIterator] = async function* () {
        for await (const chunk of reader) {
          if (topic === FACE_TOPIC) {
            faceBytes += new TextEncoder().encode(chunk).length;
            countLines(chunk);
          }
          yield chunk;
        }
      } as never;
      return handler(counted, from);
    });
  // Before connecting: the avatar opens a stream for each participant who joins.
  const drawer = new VisageAvatar({ room, canvas, atlasUrl });
  avatar = drawer;
  const audio = new AudioContext();
  const analyser = audio.createAnalyser();
  analyser.fftSize = 1024;
  const buffer = new Float32Array(analyser.fftSize);
  let hearing = false;
  room.on(RoomEvent.TrackSubscribed, (track: RemoteTrack) => {
    if (track.kind !== Track.Kind.Audio) return;
    state.audioAt = performance.now();
    // Chromium feeds a remote track to WebAudio only while a media element plays it too.
    document.body.appendChild(track.attach());
    audio.createMediaStreamSource(new MediaStream([track.mediaStreamTrack])).connect(analyser);
    hearing = true;
  });
  drawer.ready.then(
    () => (state.readyAt = performance.now()),
    (err: unknown) => (state.error = String(err)),
  );
  const g = canvas.getContext('2d')!;
  const sample = (at: number) => {
    requestAnimationFrame(sample);
    const drawn = drawer.drawn;
    const region = drawer.atlas?.mouthRegion;
    if (!drawn || !region) return;
    let rms = 0;
    const heardAt = performance.now() - (analyser.fftSize / 2 / audio.sampleRate) * 1000;
    if (hearing) {
      analyser.getFloatTimeDomainData(buffer);
      for (const x of buffer) rms += x * x;
      rms = Math.sqrt(rms / buffer.length);
    }
    state.samples.push({
      at,
      heardAt,
      pixelOpen: mouthOpening(g, region),
      lineOpen: drawn.face.open,
      rms,
      clock: drawn.clock,
      arrival: drawer.clock.arrivalOffsetMs,
      jitter: drawer.clock.jitterMs,
      rtp: drawer.clock.rtpOffsetMs,
      output: drawer.clock.outputMs,
      sender: drawer.clock.senderMs,
      faceBytes,
      dataBytes,
      bytesByType: { ...bytesByType },
      faceLines,
      faceTimes: faceTimes.size,
    });
  };
  requestAnimationFrame(sample);
  await audio.resume();
  await room.connect(url, token);
};

/** The canvas's luma (BT.601 limited range, as the atlas's I420), row by row. */
w.canvasLuma = () => {
  const canvas = document.querySelector('canvas')!;
  const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
  const out: number[] = [];
  for (let k = 0; k < data.length; k += 4) {
    out.push(0.257 * data[k]! + 0.504 * data[k + 1]! + 0.098 * data[k + 2]! + 16);
  }
  return out;
};

/**
 * The canvas's pixels, RGB, row by row, at the first frame drawn of the neutral face (eyes open
 * and ahead, mouth shut, head upright and at the bottom of a breath): the frame a video's identity
 * is measured on (the server's `renderStill`), not a blink's. A breath's bottom (lift under 0.05
 * px) comes for about 350 ms of every 4.2 s. The astronaut's frames lifted by up to half a pixel
 * read 0.350 and 0.356; at the bottom 0.349 in three runs, as at the exact rest pose.
 */
w.neutralCanvasRgb = () =>
  new Promise((resolve) => {
    const canvas = document.querySelector('canvas')!;
    const look = () => {
      const face = avatar?.drawn?.face;
      const neutral =
        face !== undefined &&
        face.lid === 0 &&
        face.gaze === 'center' &&
        face.open === 0 &&
        face.sway === 0 &&
        face.lift < 0.05;
      if (!neutral) {
        requestAnimationFrame(look);
        return;
      }
      const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
      const out: number[] = [];
      for (let k = 0; k < data.length; k += 4) out.push(data[k]!, data[k + 1]!, data[k + 2]!);
      resolve(out);
    };
    look();
  });
