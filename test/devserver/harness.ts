// Shared pieces of the dev server tests: a server on the namespace address, tokens, rtc-node
// clients, a sine publisher, a moving-bar video publisher, and analysers for what arrives.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AudioFrame,
  AudioSource,
  AudioStream,
  LocalAudioTrack,
  LocalVideoTrack,
  Room,
  RoomEvent,
  TrackPublishOptions,
  TrackSource,
  VideoBufferType,
  VideoCodec,
  VideoFrame,
  VideoSource,
  VideoStream,
  type RemoteTrack,
} from '@livekit/rtc-node';
import { AccessToken, type VideoGrant } from 'livekit-server-sdk';
import { testLogger } from '../support/testLog.js';
import { startDevServer, type DevServer } from '../../src/devserver/index.js';

export const API_KEY = 'devkey';
export const API_SECRET = 'harness-secret-0123456789';

export async function startTestServer(address: string): Promise<DevServer> {
  return startDevServer({
    port: 0,
    host: address,
    nodeIp: address,
    keys: { [API_KEY]: API_SECRET },
    emptyRoomTimeoutMs: 2_000,
    logger: testLogger(),
  });
}

export interface TokenOptions {
  grant?: VideoGrant;
  name?: string;
  metadata?: string;
  attributes?: Record<string, string>;
  kind?: 'agent' | 'standard';
  secret?: string;
}

export async function token(room: string, identity: string, options: TokenOptions = {}) {
  const at = new AccessToken(API_KEY, options.secret ?? API_SECRET, {
    identity,
    name: options.name,
    metadata: options.metadata,
    attributes: options.attributes,
    ttl: '10m',
  });
  if (options.kind) at.kind = options.kind as never;
  at.addGrant({ room, roomJoin: true, ...options.grant });
  return at.toJwt();
}

export async function connect(
  server: DevServer,
  room: string,
  identity: string,
  options: TokenOptions = {},
): Promise<Room> {
  const client = new Room();
  await client.connect(server.url, await token(room, identity, options), {
    autoSubscribe: true,
    dynacast: false,
  });
  return client;
}

/** Resolves with the event's arguments the first time `accept` returns true. */
export function waitForEvent<A extends unknown[]>(
  room: Room,
  event: RoomEvent,
  accept: (...args: A) => boolean = () => true,
  timeoutMs = 15_000,
): Promise<A> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      room.off(event, listener);
      reject(new Error(`timed out waiting for ${event}`));
    }, timeoutMs);
    const listener = (...args: unknown[]) => {
      if (!accept(...(args as A))) return;
      clearTimeout(timer);
      room.off(event, listener);
      resolve(args as A);
    };
    room.on(event, listener);
  });
}

export async function until(check: () => boolean, timeoutMs = 10_000, what = 'condition') {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

// ---- publishers -------------------------------------------------------------------------------

export const SINE_HZ = 440;
export const SINE_AMPLITUDE = 8000;
const SAMPLE_RATE = 48_000;

/** Publishes a 440 Hz sine (amplitude 8000) in 20 ms frames, paced by the AudioSource. */
export async function publishSine(client: Room, name = 'sine') {
  const source = new AudioSource(SAMPLE_RATE, 1, 200);
  const track = LocalAudioTrack.createAudioTrack(name, source);
  const publication = await client.localParticipant!.publishTrack(
    track,
    new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE, dtx: false, red: false }),
  );
  let running = true;
  let phase = 0;
  const samplesPerFrame = SAMPLE_RATE / 50;
  const loop = (async () => {
    while (running) {
      const data = new Int16Array(samplesPerFrame);
      for (let i = 0; i < samplesPerFrame; i++) {
        data[i] = Math.round(SINE_AMPLITUDE * Math.sin(phase));
        phase += (2 * Math.PI * SINE_HZ) / SAMPLE_RATE;
      }
      await source.captureFrame(new AudioFrame(data, SAMPLE_RATE, 1, samplesPerFrame));
    }
  })();
  let stopped: Promise<void> | undefined;
  return {
    publication,
    stop() {
      running = false;
      stopped ??= loop.then(() => source.close());
      return stopped;
    },
  };
}

export const VIDEO_WIDTH = 320;
export const VIDEO_HEIGHT = 240;
const BAR_WIDTH = 16;

export interface MovingBarOptions {
  name?: string;
  width?: number;
  height?: number;
  /** The SDK's default is simulcast (several layers); tests pin it either way. */
  simulcast?: boolean;
  /** The SDK's default is VP8. */
  codec?: VideoCodec;
}

/** Publishes RGBA frames (320x240 unless told) at 25 fps with a white bar moving 8 px a frame. */
export async function publishMovingBar(client: Room, options: MovingBarOptions = {}) {
  const width = options.width ?? VIDEO_WIDTH;
  const height = options.height ?? VIDEO_HEIGHT;
  const source = new VideoSource(width, height);
  const track = LocalVideoTrack.createVideoTrack(options.name ?? 'bar', source);
  const publication = await client.localParticipant!.publishTrack(
    track,
    new TrackPublishOptions({
      source: TrackSource.SOURCE_CAMERA,
      simulcast: options.simulcast ?? false,
      videoCodec: options.codec,
      videoEncoding: { maxBitrate: 800_000n, maxFramerate: 25 },
    }),
  );
  let frame = 0;
  const rgba = new Uint8Array(width * height * 4);
  const timer = setInterval(() => {
    const barX = (frame * 8) % (width - BAR_WIDTH);
    rgba.fill(16);
    for (let y = 0; y < height; y++) {
      for (let x = barX; x < barX + BAR_WIDTH; x++)
        rgba.fill(255, (y * width + x) * 4, (y * width + x) * 4 + 3);
    }
    for (let i = 3; i < rgba.length; i += 4) rgba[i] = 255;
    source.captureFrame(new VideoFrame(rgba, width, height, VideoBufferType.RGBA));
    frame++;
  }, 40);
  return {
    publication,
    async stop() {
      clearInterval(timer);
      await source.close();
    },
  };
}

// ---- analysers --------------------------------------------------------------------------------

export interface AudioStats {
  frames: number;
  rms: number;
  frequency: number;
}

/** Reads a remote audio track for `ms` and measures level (RMS) and frequency (zero crossings). */
export async function analyseAudio(
  track: RemoteTrack,
  ms: number,
  skipMs = 500,
): Promise<AudioStats> {
  const stream = new AudioStream(track, SAMPLE_RATE, 1);
  const reader = stream.getReader();
  let frames = 0;
  let sumSquares = 0;
  let samples = 0;
  let crossings = 0;
  let last = 0;
  const start = Date.now();
  const timer = setTimeout(() => void reader.cancel(), ms + skipMs + 2_000);
  try {
    while (Date.now() - start < ms + skipMs) {
      const { value, done } = await reader.read();
      if (done || !value) break;
      // Skip the start: Opus concealment and jitter-buffer warm-up distort the first frames.
      if (Date.now() - start < skipMs) continue;
      frames++;
      for (const sample of value.data) {
        sumSquares += sample * sample;
        if ((last < 0 && sample >= 0) || (last >= 0 && sample < 0)) crossings++;
        last = sample;
        samples++;
      }
    }
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => undefined);
  }
  const seconds = samples / SAMPLE_RATE;
  return {
    frames,
    rms: samples ? Math.sqrt(sumSquares / samples) : 0,
    frequency: seconds ? crossings / 2 / seconds : 0,
  };
}

/**
 * Listens to `track` until a window of `ms` carries the sine of `hz` (within `toleranceHz`), at
 * most `attempts` windows; returns the last window's figures. On a loaded machine one window can
 * hold a gap (a late packet concealed by Opus) that skews the zero-crossing count: what matters
 * is that the sine arrives, not that the first window is clean.
 */
export async function analyseSine(
  track: RemoteTrack,
  hz: number,
  { ms = 800, toleranceHz = 10, attempts = 6 } = {},
): Promise<AudioStats> {
  let stats = await analyseAudio(track, ms);
  for (let i = 1; i < attempts && Math.abs(stats.frequency - hz) >= toleranceHz; i++) {
    stats = await analyseAudio(track, ms, 0);
  }
  return stats;
}

export interface VideoStats {
  frames: number;
  width: number;
  height: number;
  /** Distinct bar positions seen: proves the picture moves. */
  barPositions: Set<number>;
}

/** Reads a remote video track for `ms`: frame count, size, and where the white bar is. */
export async function analyseVideo(track: RemoteTrack, ms: number): Promise<VideoStats> {
  const stream = new VideoStream(track);
  const reader = stream.getReader();
  const stats: VideoStats = { frames: 0, width: 0, height: 0, barPositions: new Set() };
  const start = Date.now();
  const timer = setTimeout(() => void reader.cancel(), ms + 2_000);
  try {
    while (Date.now() - start < ms) {
      const { value, done } = await reader.read();
      if (done || !value) break;
      const frame = value.frame;
      stats.frames++;
      stats.width = frame.width;
      stats.height = frame.height;
      const i420 =
        frame.type === VideoBufferType.I420 ? frame : frame.convert(VideoBufferType.I420);
      // Brightest column of the middle row of the luma plane = the bar.
      const row = Math.floor(i420.height / 2) * i420.width;
      let best = 0;
      for (let x = 0; x < i420.width; x++) {
        if (i420.data[row + x]! > i420.data[row + best]!) best = x;
      }
      stats.barPositions.add(Math.round(best / 8));
    }
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => undefined);
  }
  return stats;
}
