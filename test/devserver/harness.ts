// SPDX-License-Identifier: GPL-3.0-or-later
// Shared pieces of the dev server tests: a server on the namespace address, rtc-node clients,
// and analysers for what arrives; tokens and publishers are in publishers.ts (re-exported).
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AudioStream,
  Room,
  RoomEvent,
  VideoBufferType,
  VideoStream,
  type RemoteTrack,
} from '@livekit/rtc-node';
import { testLogger } from '../support/testLog.js';
import { startDevServer, type DevServer } from '../../src/devserver/index.js';
import { API_KEY, API_SECRET, SAMPLE_RATE, token, type TokenOptions } from './publishers.js';

export * from './publishers.js';

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
