// SPDX-License-Identifier: GPL-3.0-or-later
// The floor under an unwatched avatar (issue 47, item 1): what N rtc-node participants cost that
// are connected to the embedded LiveKit server and do nothing, measured in the same run as the
// avatars (bench/unwatched.bench.ts forks this script). The server runs in its own process
// (devserverProcess.ts), the participants in this one; each side's CPU is counted apart.
//
//   connectedRooms.ts <address> <n> <windowS> none    # connected, nothing published
//   connectedRooms.ts <address> <n> <windowS> audio   # a silent audio track, as the avatar's
//   connectedRooms.ts <address> <n> <windowS> tracks  # and a video track nobody watches
//
// `audio` publishes the avatar's audio track as the avatar does (avatarTracks.ts: an AudioSource
// at 48 kHz with a 200 ms queue, Opus with DTX) and never captures a sample, as an unwatched
// avatar that does not speak; `tracks` publishes both of its tracks so (the video at 512 x 512,
// H.264, no frame ever captured: what dynacast leaves of an unwatched avatar's video). Prints
// one JSON line: cores per participant, this process's and the server's.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { AudioSource, Room, VideoSource, dispose } from '@livekit/rtc-node';
import { token } from '../../test/devserver/publishers.js';
import { publishAvatarTracks } from '../../src/media/room/avatarTracks.js';
import { DEFAULT_AVATAR_VIDEO_CODEC } from '../../src/media/room/avatarVideoCodec.js';
import { AUDIO_QUEUE_MS } from '../../src/media/room/liveKitMediaSession.js';
import { OUTPUT_RATE } from '../../src/media/room/utterance.js';
import { stopRtcNodeLogForwarding } from '../../src/media/room/rtcNodeLogForwarding.js';

const [address, countArg, windowArg, variant] = process.argv.slice(2);
if (!address || !countArg || !windowArg || !['none', 'audio', 'tracks'].includes(variant ?? '')) {
  throw new Error('usage: connectedRooms.ts <address> <n> <windowS> none|audio|tracks');
}
// As the media processes run rtc-node: its native logs do not cross into JavaScript.
stopRtcNodeLogForwarding();
const count = Number(countArg);
const windowS = Number(windowArg);
setTimeout(() => {
  console.error('connectedRooms: took over 3 minutes; giving up');
  process.exit(1);
}, 180_000).unref();

const server = fork(fileURLToPath(new URL('./devserverProcess.ts', import.meta.url)), [address], {
  execArgv: ['--import', 'tsx'],
});
const url = await new Promise<string>((resolve) =>
  server.on('message', (m: { type: string; url?: string }) => {
    if (m.type === 'ready') resolve(m.url!);
  }),
);
const serverCpuMs = () =>
  new Promise<number>((resolve) => {
    server.once('message', (m: { cpuMs: number }) => resolve(m.cpuMs));
    server.send({ type: 'cpu' });
  });

const rooms: Room[] = [];
const sources: Array<AudioSource | VideoSource> = [];
for (let i = 0; i < count; i++) {
  const room = new Room();
  await room.connect(url, await token(`floor-${i}`, `floor-${i}`), {
    autoSubscribe: false,
    dynacast: true,
  });
  if (variant !== 'none') {
    const audioSource = new AudioSource(OUTPUT_RATE, 1, AUDIO_QUEUE_MS);
    const videoSource = variant === 'tracks' ? new VideoSource(512, 512) : undefined;
    sources.push(audioSource, ...(videoSource ? [videoSource] : []));
    await publishAvatarTracks(room.localParticipant!, {
      audioSource,
      videoSource,
      videoCodec: DEFAULT_AVATAR_VIDEO_CODEC,
      maxFramerate: 25,
      stageTimeoutMs: 30_000,
    });
  }
  rooms.push(room);
}
// Joins and negotiations settle first.
await sleep(5_000);
const own0 = process.cpuUsage();
const server0 = await serverCpuMs();
const t0 = performance.now();
await sleep(windowS * 1000);
const own = process.cpuUsage(own0);
const serverMs = (await serverCpuMs()) - server0;
const ms = performance.now() - t0;
console.log(
  JSON.stringify({
    variant,
    participants: count,
    participantCores: (own.user + own.system) / 1000 / ms / count,
    serverCores: serverMs / ms / count,
  }),
);
for (const room of rooms) await room.disconnect();
for (const source of sources) await source.close();
server.send({ type: 'close' });
await new Promise((resolve) => server.once('exit', resolve));
await dispose();
process.exit(0);
