// The smallest agent with a Visage face, as in the README's agent quick start: it greets whoever
// joins a room. Runs offline against `visage dev` (no LLM, no STT, no LiveKit Cloud):
//   export $(npx visage dev --print-livekit-credentials) VISAGE_API_KEY=sk_...
//   npx tsx examples/agent-worker/minimal.ts dev
import { fileURLToPath } from 'node:url';
import { cli, defineAgent, ServerOptions, voice, type JobContext } from '@livekit/agents';
import { AvatarSession } from '../../src/index.js'; // in your project: from '@visage-avatar/livekit-plugin'

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
      outputOptions: { syncTranscription: false }, // the transcript follows what the avatar said
    });
    session.say('Hello! I am Ada, your agent, with a Visage face and voice.');
  },
});

cli.runApp(new ServerOptions({ agent: fileURLToPath(import.meta.url) }));
