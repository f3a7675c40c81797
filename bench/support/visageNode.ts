// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * A Visage node for benchmarks, in its own process so that its CPU is measured apart from the
 * subscribers: the embedded LiveKit server plus the API with the real media core, on the
 * namespace address; argv[3] media processes (0, the default: media in this process).
 * Prints one JSON line when ready (the API's URL and key, the LiveKit server's URL and keys);
 * answers "cpu" on stdin with its CPU time (its media processes' included), "mem" with its resident
 * memory, its media processes' and the LiveKit process's, "marks <utterance>" with an utterance's
 * way to its first audio and "join <room>" with the steps of the avatar's join into that room.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { firstAudioLog } from './firstAudioLog.js';
import { readEnvironment } from '../../src/cli/environment.js';
import { benchNodeConfig, startBenchLivekit } from './benchLivekit.js';
import { mediaSettingsFrom } from '../../src/cli/mediaSettings.js';
import type { MediaAssets } from '../../src/media/mediaCore.js';
import { LiveKitMediaCore } from '../../src/media/room/index.js';
import { TtsEngines } from '../../src/media/tts/index.js';
import type { FileStorage } from '../../src/server/assets/fileStorage.js';
import { ProcessPoolMediaCore } from '../../src/media/mediaProcesses/index.js';
import { keyAdmin } from '../../src/server/admin/keyAdmin.js';
import { startVisage } from '../../src/server/runtime.js';

const address = process.argv[2]!;
const processes = Number(process.argv[3] ?? 0);
// Logs go to stderr (warnings and worse): stdout is the answer channel to the bench. The media's
// "first audio" lines (from this process or its media processes) are kept for the "marks" request.
const { log, marks: firstAudio, joins } = firstAudioLog();
const lk = await startBenchLivekit(address);
const livekit = lk.process;
// Photo avatars' builds come from the server's file storage, as under `visage dev`.
const storage: { files?: FileStorage } = {};
const assets: MediaAssets = {
  get: (id) =>
    storage.files ? storage.files.get(id) : Promise.reject(new Error('file storage not open')),
};
// The media settings from this process's environment (VISAGE_VIDEO_CODEC, VISAGE_TTS_ENGINE and a
// provider's settings), read as the CLI reads them.
const settings = mediaSettingsFrom(readEnvironment());
const tts = new TtsEngines(settings.tts);
const media =
  processes > 0
    ? await ProcessPoolMediaCore.create({
        log,
        processes,
        assets,
        videoCodec: settings.videoCodec,
        tts: settings.tts,
      })
    : await LiveKitMediaCore.create({ log, assets, videoCodec: settings.videoCodec, tts });
const server = await startVisage(
  { ...benchNodeConfig(lk, 'visage-bench-'), media: settings },
  { log, media, tts },
);
storage.files = server.files;
const { secret } = await keyAdmin.create(server.store, 'bench', 64);
// The LiveKit server's URL and keys too: the bench puts a viewer into a room before the avatar.
process.stdout.write(
  `${JSON.stringify({ apiUrl: server.url, secret, livekit: { url: lk.url, apiKey: lk.apiKey, apiSecret: lk.apiSecret } })}\n`,
);

/** CPU time (ms) of a process, from /proc (utime + stime, in clock ticks). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

// Event-loop utilisation since the previous "cpu" line: how busy the JS thread is.
let eluMark = performance.eventLoopUtilization();
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'cpu') {
    const u = process.cpuUsage();
    const eventLoop = performance.eventLoopUtilization(eluMark).utilization;
    eluMark = performance.eventLoopUtilization();
    // With media processes: the busiest media process's event loop is what limits the node.
    const pool = media instanceof ProcessPoolMediaCore ? await media.stats() : [];
    process.stdout.write(
      `${JSON.stringify({
        cpuMs: (u.user + u.system) / 1000 + pool.reduce((sum, w) => sum + w.cpuMs, 0),
        livekitCpuMs: cpuMsOf(livekit.pid),
        at: performance.now(),
        eventLoop: pool.length > 0 ? Math.max(...pool.map((w) => w.eventLoop)) : eventLoop,
        apiEventLoop: eventLoop,
      })}\n`,
    );
  } else if (line === 'mem') {
    // After a full collection when the process runs with --expose-gc: what is really retained.
    (globalThis as { gc?: () => void }).gc?.();
    const m = process.memoryUsage();
    const pool = media instanceof ProcessPoolMediaCore ? await media.memory() : [];
    const processesRss = pool.reduce((sum, w) => sum + w.rss, 0);
    const processesHeap = pool.reduce((sum, w) => sum + w.heapUsed, 0);
    const lkMemory = await livekit.memory();
    process.stdout.write(
      `${JSON.stringify({ rss: m.rss, heapUsed: m.heapUsed, external: m.external, processesRss, processesHeap, livekitRss: lkMemory.rss, livekitHeap: lkMemory.heapUsed, livekitHeapTotal: lkMemory.heapTotal })}\n`,
    );
  } else if (line.startsWith('marks ')) {
    process.stdout.write(`${JSON.stringify(firstAudio.get(line.slice(6)) ?? null)}\n`);
  } else if (line.startsWith('join ')) {
    process.stdout.write(`${JSON.stringify(joins.get(line.slice(5)) ?? null)}\n`);
  } else if (line === 'quit') {
    break;
  }
}
await server.close();
await livekit.close();
process.exit(0);
