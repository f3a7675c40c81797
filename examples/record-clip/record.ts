// SPDX-License-Identifier: Apache-2.0
/**
 * See and hear a Visage avatar without a browser: creates a session, joins its room with the
 * participant token (as a frontend would), asks the avatar to say something, and records what
 * arrives: `avatar.wav` (the audio) and PNG snapshots of the video, into ./clip (or --out DIR).
 *
 *   VISAGE_API_KEY=sk_... npx tsx examples/record-clip/record.ts "Hello! I am a Visage avatar."
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  AudioStream,
  Room,
  RoomEvent,
  TrackKind,
  VideoBufferType,
  VideoStream,
  dispose,
  type RemoteTrack,
} from '@livekit/rtc-node';
import { VisageClient } from '@visage-avatar/client';
import { encodeWav } from '../../src/media/audio/index.js';
import { i420ToPng } from '../../src/media/render/index.js';
import { applyRtcNodeLogLevel } from '../../src/rtcNodeLog.js';

// rtc-node's debug lines stay out of the output (VISAGE_RTC_LOG_LEVEL=debug brings them back).
applyRtcNodeLogLevel();

const { values, positionals } = parseArgs({
  options: {
    avatar: { type: 'string', default: 'avt_Ada000000000000000000001' },
    voice: { type: 'string' },
    out: { type: 'string', default: 'clip' },
  },
  allowPositionals: true,
});
const text = positionals.join(' ') || 'Hello! I am a Visage avatar, and this is my voice.';
const out = resolve(values.out!);
mkdirSync(out, { recursive: true });

const visage = new VisageClient(); // VISAGE_API_KEY, VISAGE_API_URL (default http://127.0.0.1:8080)
const session = await visage.sessions.create({
  avatar_id: values.avatar!,
  mode: 'video',
  ...(values.voice ? { voice_id: values.voice } : {}),
});
console.log(`session ${session.session_id} in room ${session.room_name}`);

const room = new Room();
const pcm: Int16Array[] = [];
const frames: { atMs: number; png: Buffer }[] = [];
const t0 = performance.now();
let lastFrameMs = -Infinity;
room.on(RoomEvent.TrackSubscribed, (track: RemoteTrack) => {
  if (track.kind === TrackKind.KIND_AUDIO) {
    (async () => {
      for await (const f of new AudioStream(track, { sampleRate: 48_000, numChannels: 1 })) {
        pcm.push(new Int16Array(f.data));
      }
    })().catch(() => undefined); // the stream errors when the room disconnects
  } else {
    (async () => {
      for await (const { frame } of new VideoStream(track)) {
        const now = performance.now() - t0;
        if (now - lastFrameMs < 400) continue; // a snapshot every 0.4 s
        lastFrameMs = now;
        const i420 =
          frame.type === VideoBufferType.I420 ? frame : frame.convert(VideoBufferType.I420);
        frames.push({
          atMs: now,
          png: i420ToPng({ data: i420.data, width: frame.width, height: frame.height }),
        });
      }
    })().catch(() => undefined); // the stream errors when the room disconnects
  }
});
const done = new Promise<void>((resolveDone) => {
  room.on(RoomEvent.DataReceived, (payload, _p, _k, topic) => {
    if (topic !== 'lk.chat') return;
    const msg = JSON.parse(new TextDecoder().decode(payload)) as { text: string; final: boolean };
    console.log(`lk.chat ${msg.final ? 'final  ' : 'interim'} ${JSON.stringify(msg.text)}`);
    if (msg.final) setTimeout(resolveDone, 800);
  });
});
await room.connect(session.livekit_url, session.participant_token!, {
  autoSubscribe: true,
  dynacast: false,
});
await sleep(1_000);
await visage.sessions.speak(session.session_id, text);
await Promise.race([done, sleep(60_000, undefined, { ref: false })]);

await room.disconnect();
await visage.sessions.delete(session.session_id);
const all = new Int16Array(pcm.reduce((n, c) => n + c.length, 0));
let offset = 0;
for (const chunk of pcm) {
  all.set(chunk, offset);
  offset += chunk.length;
}
writeFileSync(join(out, 'avatar.wav'), encodeWav(all, 48_000));
frames.forEach((f, i) =>
  writeFileSync(join(out, `frame-${String(i).padStart(2, '0')}.png`), f.png),
);
console.log(`wrote ${join(out, 'avatar.wav')} and ${frames.length} frames to ${out}`);
await dispose();
