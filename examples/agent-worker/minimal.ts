// SPDX-License-Identifier: Apache-2.0
// The smallest agent with a Visage face, as in the README's agent quick start: it greets whoever
// joins a room. Runs offline against `visage dev` (no LLM, no STT, no LiveKit Cloud):
// In this checkout:
//   export $(npx visage dev --print-livekit-credentials) VISAGE_API_KEY=sk_...
//   npx tsx examples/agent-worker/minimal.ts dev
import { cli, defineAgent, ServerOptions, voice, type JobContext } from '@livekit/agents';
import { AvatarSession } from '@visage-avatar/livekit-plugin';

export default defineAgent({
  entry: async (ctx: JobContext) => {
    await ctx.connect();
    // Offline: no VAD, and no turn detector (agents-js 1.9 asks LiveKit Cloud for one by default).
    const session = new voice.AgentSession({ vad: null, turnHandling: { turnDetection: null } });
    const avatar = new AvatarSession({ avatarId: 'avt_Ada000000000000000000001' }); // $VISAGE_API_KEY
    await avatar.start(session, ctx.room); // after ctx.connect(), before session.start()
    await session.start({
      agent: new voice.Agent({ instructions: 'You are a friendly assistant.' }),
      room: ctx.room,
      // The avatar speaks, not an audio track of the agent's; the transcript follows what it said.
      outputOptions: { audioEnabled: false, syncTranscription: false },
    });
    session.say('Hello! I am Ada, your agent, with a Visage face and voice.');
  },
});

// The file that defines the agent (this one): its jobs run in processes that import it.
// process.argv[1] names it in CommonJS and ES modules alike, where import.meta.url does not.
// A job whose process takes longer than initializeProcessTimeout to start is dropped: the
// default, 10 s, is short for a busy laptop.
cli.runApp(new ServerOptions({ agent: process.argv[1]!, initializeProcessTimeout: 60_000 }));
