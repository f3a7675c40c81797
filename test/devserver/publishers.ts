// SPDX-License-Identifier: GPL-3.0-or-later
// The media the dev server tests and its benchmark publish (a sine, a moving bar) and the tokens
// they join with. Free of the test runner: bench/devserver.bench.ts runs it outside vitest.
import {
  AudioFrame,
  AudioSource,
  LocalAudioTrack,
  LocalVideoTrack,
  Room,
  TrackPublishOptions,
  TrackSource,
  VideoBufferType,
  VideoCodec,
  VideoFrame,
  VideoSource,
} from '@livekit/rtc-node';
import { AccessToken, type VideoGrant } from 'livekit-server-sdk';

export const API_KEY = 'devkey';
export const API_SECRET = 'harness-secret-0123456789';

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

export const SINE_HZ = 440;
export const SINE_AMPLITUDE = 8000;
export const SAMPLE_RATE = 48_000;

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
