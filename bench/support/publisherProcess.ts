// SPDX-License-Identifier: GPL-3.0-or-later
// One speaking avatar's media, alone in this process, for bench/support/frameCost.ts: joins the
// room at argv[2] with the token argv[3], publishes the avatar's tracks as a session does
// (publishAvatarTracks), renders 25 frames a second with a speaking mouth and pushes speech-like
// audio in 100 ms frames, and prints its CPU (the whole process, and its JavaScript thread alone)
// per frame with the encoder's figures, as one JSON line. No TTS, no Visage protocol.
// FRAME_COST_BEFORE=1 runs it as before issue 47's change: rtc-node's logs forwarded to
// JavaScript. FRAME_COST_CLIENT=1 runs it as a `client` mode session: no video, the face sent
// ahead on the `visage.face` text stream (FaceAhead), the same audio; FRAME_COST_AUDIO=1 the
// floor under both: the audio alone (no video, no face stream).
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AudioFrame,
  AudioSource,
  Room,
  VideoBufferType,
  VideoFrame,
  VideoSource,
  dispose,
  type RoomOptions,
} from '@livekit/rtc-node';
import { toInt16 } from '../../src/media/audio/index.js';
import { VISEMES } from '../../src/media/lipsync/index.js';
import pino from 'pino';
import { createFaceRenderer, FaceMotion } from '../../src/media/render/index.js';
import { publishAvatarTracks } from '../../src/media/room/avatarTracks.js';
import { FaceAhead } from '../../src/media/room/faceAhead.js';
import { FaceStream } from '../../src/media/room/faceStream.js';
import { stopRtcNodeLogForwarding } from '../../src/media/room/rtcNodeLogForwarding.js';

const before = process.env.FRAME_COST_BEFORE === '1';
const audioOnly = process.env.FRAME_COST_AUDIO === '1';
const client = process.env.FRAME_COST_CLIENT === '1' || audioOnly;
if (!before) stopRtcNodeLogForwarding();
const [url, token, avatarId, seconds] = process.argv.slice(2);
if (!url || !token || !avatarId) throw new Error('usage: publisherProcess URL TOKEN AVATAR [S]');
const RATE = 48_000;

/** CPU ms of this process's main (JavaScript) thread, from /proc (Linux). */
function mainThreadCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

// Log records rtc-node's native side sends to JavaScript (rtcNodeLogForwarding.ts).
let logRecords = 0;
{
  const { FfiClient } = (await import(
    // rtc-node's own FFI client, the instance its classes use (not exported by its entry).
    new URL('../../node_modules/@livekit/rtc-node/dist/ffi_client.cjs', import.meta.url).href
  )) as { FfiClient: { instance: NodeJS.EventEmitter } };
  FfiClient.instance.on('ffi_event', (e: { message: { case?: string; value?: unknown } }) => {
    if (e.message.case === 'logs')
      logRecords += (e.message.value as { records: unknown[] }).records.length;
  });
}

/** CPU ms per thread name (libwebrtc's and rtc-node's threads are named), from /proc. */
function threadCpuMs(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name =
        tid === String(process.pid)
          ? 'JavaScript (main)'
          : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
      // Numbered pools (tokio-runtime-w, worker 1..n) together.
      const key = name.replace(/[-_ ]?\d+$/, '');
      out.set(key, (out.get(key) ?? 0) + ms);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

const room = new Room();
const options: RoomOptions & { singlePeerConnection: boolean } = {
  autoSubscribe: false,
  dynacast: true,
  singlePeerConnection: false,
};
await room.connect(url, token, options);
const videoSource = client ? undefined : new VideoSource(512, 512);
const audioSource = new AudioSource(RATE, 1, 200);
await publishAvatarTracks(room.localParticipant!, {
  videoSource,
  audioSource,
  videoCodec: 'h264',
  maxFramerate: 25,
  stageTimeoutMs: 10_000,
});
const renderer = createFaceRenderer(avatarId, { seed: 5 });
/** The mouth of frame i, the same in both modes. */
const mouthOf = (i: number) => ({
  viseme: VISEMES[Math.floor(i / 4) % VISEMES.length]!,
  openness: (i % 5) / 4,
});
const bornAt = performance.now();
const faceStream = new FaceStream(
  { streamText: (o) => room.localParticipant!.streamText(o) },
  { avatarId, width: 512, height: 512, fps: 25 },
  pino({ level: 'silent' }),
);
const face = new FaceAhead({
  motion: new FaceMotion(5),
  stream: faceStream,
  mouthIn: (aheadMs) => mouthOf(Math.floor((performance.now() + aheadMs - bornAt) / 40)),
  state: () => ({ parked: false, conversation: undefined }),
  bornAt,
  toEpochMs: (ms) => performance.timeOrigin + ms,
  fps: 25,
});
if (client && !audioOnly) faceStream.restart(performance.timeOrigin + performance.now());

let running = true;
// Speech-like audio: a 140 Hz buzz at syllable rate, paced by the source's queue.
const audio = (async () => {
  for (let f = 0; running; f++) {
    const pcm = new Float32Array(RATE / 10);
    for (let k = 0; k < pcm.length; k++) {
      const t = (f * pcm.length + k) / RATE;
      pcm[k] = 0.3 * Math.abs(Math.sin(Math.PI * 4 * t)) * Math.sin(2 * Math.PI * 140 * t);
    }
    const s = toInt16(pcm);
    await audioSource.captureFrame(new AudioFrame(s, RATE, 1, s.length));
  }
})();

async function frames(n: number): Promise<void> {
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    if (videoSource) {
      const frame = renderer.renderFrame({
        timeMs: performance.now(),
        mouth: mouthOf(i),
        parked: false,
      });
      videoSource.captureFrame(new VideoFrame(frame, 512, 512, VideoBufferType.I420));
    } else if (!audioOnly) {
      face.tick();
    }
    await sleep(Math.max(0, start + (i + 1) * 40 - performance.now()));
  }
}

async function encoder() {
  if (!videoSource) return { bytes: 0, frames: 0, encodeS: 0, qpSum: 0, width: 0 };
  for (const e of (await room.getRtcStats()).publisherStats) {
    const s = e.stats;
    if (s.case === 'outboundRtp' && s.value.stream?.kind === 'video') {
      return {
        bytes: Number(s.value.sent?.bytesSent ?? 0),
        frames: s.value.outbound?.framesEncoded ?? 0,
        encodeS: s.value.outbound?.totalEncodeTime ?? 0,
        qpSum: Number(s.value.outbound?.qpSum ?? 0),
        width: s.value.outbound?.frameWidth ?? 0,
      };
    }
  }
  throw new Error('no outbound video');
}

await frames(75); // warm-up: the first key frame, the encoder's ramp
const n = Math.round(Number(seconds ?? 10) * 25);
const e0 = await encoder();
const c0 = process.cpuUsage();
const m0 = mainThreadCpuMs();
const l0 = logRecords;
const th0 = threadCpuMs();
console.log('measuring');
const t0 = performance.now();
await frames(n);
const wallS = (performance.now() - t0) / 1000;
const c = process.cpuUsage(c0);
const m = mainThreadCpuMs() - m0;
const th1 = threadCpuMs();
const e1 = await encoder();
const threads = Object.fromEntries(
  [...th1]
    .map(([name, ms]) => [name, (ms - (th0.get(name) ?? 0)) / 1000 / wallS] as const)
    .filter(([, cores]) => cores >= 0.001)
    .sort((a, b) => b[1] - a[1]),
);
running = false;
await audio;
console.log(
  JSON.stringify({
    frames: n,
    wallS,
    processCores: (c.user + c.system) / 1e6 / wallS,
    mainThreadCores: m / 1000 / wallS,
    kbps: ((e1.bytes - e0.bytes) * 8) / 1000 / wallS,
    encodeMsPerFrame: ((e1.encodeS - e0.encodeS) * 1000) / Math.max(1, e1.frames - e0.frames),
    meanQp: (e1.qpSum - e0.qpSum) / Math.max(1, e1.frames - e0.frames),
    width: e1.width,
    logRecordsPerS: (logRecords - l0) / wallS,
    faceWrites: faceStream.writes,
    threads,
  }),
);
await faceStream.close();
await room.disconnect();
await videoSource?.close();
await audioSource.close();
await dispose();
process.exit(0);
