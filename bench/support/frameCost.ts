// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Where one speaking frame's CPU goes on Visage's side, piece by piece, in this one process: many
 * frames of each piece, timed with process.cpuUsage (CPU time of the whole process, all threads:
 * a loaded machine stretches wall time, not this). The encoders (libwebrtc's H.264 and Opus) run
 * only behind a published track and are measured by the density steps instead.
 */
import {
  AudioFrame,
  AudioSource,
  VideoBufferType,
  VideoFrame,
  VideoSource,
} from '@livekit/rtc-node';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { AccessToken } from 'livekit-server-sdk';
import { pasteSprite } from '@visage-avatar/web/composition';
import { toInt16 } from '../../src/media/audio/index.js';
import { AudioMouthTracker, VISEMES, speechMouth } from '../../src/media/lipsync/index.js';
import { createFaceRenderer } from '../../src/media/render/index.js';
import { avatarAtlas } from '../../src/media/render/spriteAtlas.js';
import { VideoLoop } from '../../src/media/room/videoLoop.js';
import { AvatarClient } from '../../test/media/room/avatarClient.js';
import { startBenchLivekit } from './benchLivekit.js';

const OUTPUT_RATE = 48_000;
const FPS = 25;

export interface FrameCostRow {
  piece: string;
  /** CPU µs per video frame (25 a second), or per second of audio for the audio rows. */
  usPerFrame: number;
  /** Cores per session at 25 fps (per second of audio: the same). */
  cores: number;
}

/** CPU µs (user + system, all threads) that `fn` takes per call, over `n` calls. */
function cpuPerCall(n: number, fn: (i: number) => void): number {
  for (let i = 0; i < Math.min(n, 50); i++) fn(i); // warm-up: JIT, caches
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) fn(i);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / n;
}

/** CPU µs per second of this process while it waits `ms`. */
async function cpuPerSecond(ms: number): Promise<number> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / ((performance.now() - t0) / 1000);
}

/** A speaking mouth: every viseme in turn, opening and closing over five frames. */
const mouthAt = (i: number) => ({
  viseme: VISEMES[Math.floor(i / 5) % VISEMES.length]!,
  openness: [0.2, 0.6, 1, 0.6, 0.2][i % 5]!,
});

/** A voice-like test signal: a 140 Hz buzz with syllable-rate loudness, 100 ms per call. */
function speechLike(frame: number): Float32Array {
  const n = OUTPUT_RATE / 10;
  const out = new Float32Array(n);
  for (let k = 0; k < n; k++) {
    const t = (frame * n + k) / OUTPUT_RATE;
    out[k] = 0.3 * Math.abs(Math.sin(Math.PI * 4 * t)) * Math.sin(2 * Math.PI * 140 * t);
  }
  return out;
}

export async function measureFrameCost(avatarId: string, frames = 1500): Promise<FrameCostRow[]> {
  const rows: FrameCostRow[] = [];
  const add = (piece: string, us: number, perSecond = FPS) =>
    rows.push({ piece, usPerFrame: us, cores: (us * perSecond) / 1e6 });
  const atlas = avatarAtlas(avatarId);

  const speaking = createFaceRenderer(avatarId, { seed: 7 });
  add(
    'render a speaking frame (renderFrame)',
    cpuPerCall(frames, (i) =>
      speaking.renderFrame({ timeMs: i * 40, mouth: mouthAt(i), parked: false }),
    ),
  );
  const idle = createFaceRenderer(avatarId, { seed: 7 });
  add(
    'render an idle frame (renderFrame, mouth at rest)',
    cpuPerCall(frames, (i) =>
      idle.renderFrame({ timeMs: i * 40, mouth: { viseme: 'rest', openness: 0 }, parked: false }),
    ),
  );
  const out = new Uint8Array(atlas.poses[0]!.length);
  add(
    '  of which: the whole pose copied (393 KB)',
    cpuPerCall(frames, (i) => out.set(atlas.poses[i % atlas.poses.length]!)),
  );
  add(
    '  of which: eyes and mouth pasted',
    cpuPerCall(frames, (i) => {
      pasteSprite(out, 512, 512, atlas.eyes, i % atlas.eyes.sprites.length, 0, 0);
      pasteSprite(out, 512, 512, atlas.mouths, i % atlas.mouths.sprites.length, 0, 0);
    }),
  );

  // The hand-over to rtc-node: a VideoFrame and captureFrame (protobuf request over the FFI, the
  // native copy into libwebrtc's buffer). No track: the encoder is not in this figure.
  const source = new VideoSource(speaking.width, speaking.height);
  const frame = speaking.renderFrame({ timeMs: 0, mouth: mouthAt(0), parked: false });
  add(
    'hand the frame to rtc-node (VideoFrame + captureFrame)',
    cpuPerCall(frames, (i) =>
      source.captureFrame(
        new VideoFrame(frame, speaking.width, speaking.height, VideoBufferType.I420),
        BigInt(i * 40_000),
      ),
    ),
  );
  await source.close();

  // The mouth pose from the audio, as SpeechPlayer.mouthNow asks it for each frame.
  const tracker = new AudioMouthTracker();
  for (let f = 0; f < frames / 2.5 + 10; f++) tracker.push(speechLike(f), OUTPUT_RATE, f * 100);
  add(
    'mouth pose for the frame (AudioMouthTracker + speechMouth)',
    cpuPerCall(frames, (i) => speechMouth(tracker.poseAt(i * 40), mouthAt(i))),
  );

  // What this process spends doing nothing (rtc-node's runtime, V8's background threads), per
  // second: the timed rows below run in real time and have it taken off.
  const floorPerS = await cpuPerSecond(2_000);

  // The frame loop's own timers: a VideoLoop at 25 fps with nothing to draw, for 2 s.
  {
    let ticks = 0;
    const loop = new VideoLoop(FPS, () => ticks++);
    loop.start();
    const perS = await cpuPerSecond(2_000);
    loop.stop();
    add('the frame loop itself (timers, no drawing)', Math.max(0, perS - floorPerS) / FPS);
  }

  // Audio, per second of speech: analysing it for the mouth, converting it to 16-bit, and
  // handing it to the AudioSource in 100 ms frames (SpeechPlayer's FRAME_SAMPLES). Pushed as
  // fast as the source takes it; its native 10 ms pacing runs meanwhile, and is counted.
  {
    const pcm = Array.from({ length: 30 }, (_, f) => speechLike(f));
    const analyse = new AudioMouthTracker();
    add(
      'audio: mouth analysis, per second of speech',
      cpuPerCall(300, (i) => analyse.push(pcm[i % 30]!, OUTPUT_RATE, i * 100)) * 10,
      1,
    );
    add(
      'audio: to 16-bit, per second of speech',
      cpuPerCall(300, (i) => toInt16(pcm[i % 30]!)) * 10,
      1,
    );
    const audio = new AudioSource(OUTPUT_RATE, 1, 200);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let f = 0; f < 50; f++) {
      const s = toInt16(pcm[f % 30]!);
      await audio.captureFrame(new AudioFrame(s, OUTPUT_RATE, 1, s.length));
    }
    const c = process.cpuUsage(c0);
    const seconds = (performance.now() - t0) / 1000;
    await audio.close();
    add(
      'audio: AudioSource.captureFrame + its native pacing, per second',
      Math.max(0, (c.user + c.system) / seconds - floorPerS),
      1,
    );
  }
  return rows;
}

/** The rows as console.table wants them. */
export function frameCostTable(rows: FrameCostRow[]): Record<string, Record<string, string>> {
  return Object.fromEntries(
    rows.map((r) => [
      r.piece,
      {
        'CPU µs (per frame, or per s of audio)': r.usPerFrame.toFixed(1),
        cores: r.cores.toFixed(4),
      },
    ]),
  );
}

/** One speaking avatar's media process, measured over a window (see publisherProcess.ts). */
export interface PublishedCost {
  variant: 'before' | 'now' | 'client' | 'audio';
  frames: number;
  processCores: number;
  mainThreadCores: number;
  kbps: number;
  encodeMsPerFrame: number;
  meanQp: number;
  width: number;
  logRecordsPerS: number;
  /** Cores per thread name (the JavaScript thread, libwebrtc's encoder and network, ...). */
  threads: Record<string, number>;
  /** At the viewer, over the window. */
  viewerFps: number;
  viewerFreezes: number;
  /** The embedded LiveKit server's process over the viewer's window: forwarding it all. */
  livekitCores: number;
  /** Client mode: the face stream's writes over the run (0 in video mode). */
  faceWrites: number;
}

/**
 * Video mode before issue 47's change and now, client mode (no video, the face stream), and the
 * floor under both: the audio track alone.
 */
export const VARIANTS = ['before', 'now', 'client', 'audio'] as const;

/** CPU ms of a process (all its threads), from /proc (Linux). */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * A speaking avatar's media alone in a process (publisherProcess.ts), in each of `VARIANTS`, in
 * turn `rounds` times each in this run,
 * against the embedded LiveKit server in its own process and a viewer here that decodes the
 * video: CPU per session, split into the JavaScript thread and the rest, and the encoder's
 * bitrate and mean QP.
 */
export async function measurePublishedCost(
  address: string,
  avatarId: string,
  rounds = 2,
  seconds = 10,
): Promise<PublishedCost[]> {
  const lk = await startBenchLivekit(address);
  const out: PublishedCost[] = [];
  try {
    for (let r = 0; r < rounds * VARIANTS.length; r++) {
      const variant = VARIANTS[r % VARIANTS.length]!;
      const room = `frame-cost-${r}`;
      const token = async (identity: string, publish: boolean) => {
        const t = new AccessToken(lk.apiKey, lk.apiSecret, { identity });
        t.addGrant({ roomJoin: true, room, canPublish: publish, canSubscribe: true });
        return t.toJwt();
      };
      const viewer = new AvatarClient({ streams: false });
      await viewer.join(lk.url, await token('viewer', false));
      const child = spawnPublisher(
        [
          '--import',
          'tsx',
          'bench/support/publisherProcess.ts',
          lk.url,
          await token('avatar', true),
          avatarId,
          String(seconds),
        ],
        variant,
        (seconds + 60) * 1000,
      );
      // The viewer's window: the publisher's, less its last second.
      await child.measuring;
      const v0 = await viewer.receivedStats();
      const k0 = { ms: processCpuMs(lk.process.pid), at: performance.now() };
      await sleep((seconds - 1) * 1000);
      const k1 = { ms: processCpuMs(lk.process.pid), at: performance.now() };
      const v1 = await viewer.receivedStats();
      const stdout = await child.done;
      await viewer.leave();
      const figures = JSON.parse(stdout.trim().split('\n').at(-1)!) as Omit<
        PublishedCost,
        'variant' | 'viewerFps' | 'viewerFreezes' | 'livekitCores'
      >;
      out.push({
        variant,
        ...figures,
        viewerFps: (v1.framesDecoded - v0.framesDecoded) / ((v1.atUs - v0.atUs) / 1e6),
        viewerFreezes: v1.freezes - v0.freezes,
        livekitCores: (k1.ms - k0.ms) / (k1.at - k0.at),
      });
    }
  } finally {
    await lk.process.close();
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** publisherProcess.ts as a child: `measuring` once its window starts, `done` with its stdout. */
function spawnPublisher(args: string[], variant: PublishedCost['variant'], timeoutMs: number) {
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env,
      FRAME_COST_BEFORE: variant === 'before' ? '1' : '0',
      FRAME_COST_CLIENT: variant === 'client' ? '1' : '0',
      FRAME_COST_AUDIO: variant === 'audio' ? '1' : '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: timeoutMs,
  });
  let stdout = '';
  let measuring: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (measuring = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('measuring')) measuring();
  });
  const done = new Promise<string>((resolve, reject) =>
    child.on('exit', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`publisherProcess exited with ${code}`)),
    ),
  );
  return { measuring: Promise.race([started, done.then(() => undefined)]), done };
}
