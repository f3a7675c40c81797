// SPDX-License-Identifier: GPL-3.0-or-later
// A minimal, unmodified LiveKit Agents (1.9) worker for the dispatch tests. Run as
// `node --import tsx agentDispatch.worker.ts dev` with LIVEKIT_URL / LIVEKIT_API_KEY /
// LIVEKIT_API_SECRET and optionally LIVEKIT_AGENT_NAME. Each job's agent joins its room and
// publishes a sine whose frequency comes from the job metadata (`{"hz": 550}`, default 660), so a
// test can tell which dispatch an agent came from by listening to it.
import { fileURLToPath } from 'node:url';
import { cli, defineAgent, ServerOptions, type JobContext } from '@livekit/agents';
import {
  AudioFrame,
  AudioSource,
  LocalAudioTrack,
  TrackPublishOptions,
  TrackSource,
} from '@livekit/rtc-node';

const SAMPLE_RATE = 48_000;
const AMPLITUDE = 8000;

function toneHz(metadata: string): number {
  try {
    const hz = (JSON.parse(metadata) as { hz?: unknown }).hz;
    return typeof hz === 'number' && hz > 0 ? hz : 660;
  } catch {
    return 660;
  }
}

export default defineAgent({
  entry: async (ctx: JobContext) => {
    await ctx.connect();
    const hz = toneHz(ctx.job.metadata);
    const source = new AudioSource(SAMPLE_RATE, 1, 200);
    const track = LocalAudioTrack.createAudioTrack(`tone-${hz}`, source);
    await ctx.room.localParticipant!.publishTrack(
      track,
      new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE, dtx: false, red: false }),
    );
    let running = true;
    ctx.addShutdownCallback(async () => {
      running = false;
    });
    let phase = 0;
    const samples = SAMPLE_RATE / 50;
    // captureFrame paces the loop in real time (the source's queue is 200 ms).
    while (running && ctx.room.isConnected) {
      const data = new Int16Array(samples);
      for (let i = 0; i < samples; i++) {
        data[i] = Math.round(AMPLITUDE * Math.sin(phase));
        phase += (2 * Math.PI * hz) / SAMPLE_RATE;
      }
      await source.captureFrame(new AudioFrame(data, SAMPLE_RATE, 1, samples));
    }
    await source.close();
  },
});

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  cli.runApp(
    new ServerOptions({
      agent: fileURLToPath(import.meta.url),
      // In dev mode every job gets a freshly started process (tsx, @livekit/agents, rtc-node),
      // and the agents default gives it 10 s to start: on a loaded machine it can take longer,
      // and the job is then dropped with only "error launching job" in the worker's output.
      initializeProcessTimeout: 120_000,
    }),
  );
}
