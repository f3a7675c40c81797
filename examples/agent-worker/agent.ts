// A conversational bot worker: LiveKit Agents + the Visage plugin + an LLM through the `openai`
// package. Without an STT the user talks to it by text chat (`lk.chat` text streams, which
// LiveKit frontends send); the avatar speaks every reply in its own voice.
//
//   npx visage dev                                    # embedded LiveKit on :7880, API on :8080
//   VISAGE_API_KEY=sk_... OPENAI_BASE_URL=... npx tsx examples/agent-worker/agent.ts dev
import { fileURLToPath } from 'node:url';
import { cli, defineAgent, type JobContext, ServerOptions, voice } from '@livekit/agents';
import { AvatarSession } from '../../src/index.js';
import { OpenAICompatibleLLM } from './openaiLlm.js';

export default defineAgent({
  entry: async (ctx: JobContext) => {
    await ctx.connect();
    const session = new voice.AgentSession({
      llm: new OpenAICompatibleLLM(),
      // No STT/VAD configured: text chat in, avatar speech out.
      vad: null,
      turnHandling: { turnDetection: null, interruption: { resumeFalseInterruption: false } },
    });
    const avatar = new AvatarSession({
      avatarId: process.env.VISAGE_AVATAR_ID ?? 'avt_Ada000000000000000000001',
      voiceId: process.env.VISAGE_VOICE_ID,
    });
    await avatar.start(session, ctx.room);
    await session.start({
      agent: new voice.Agent({
        instructions:
          'You are a friendly assistant with a face and a voice. Answer in one to three short ' +
          'spoken sentences, with no markdown, lists or emoji.',
      }),
      room: ctx.room,
      // Commit exactly what the avatar said when it is interrupted (see src/plugin/README.md).
      outputOptions: { syncTranscription: false },
    });
    session.generateReply({ instructions: 'Greet the user and offer your help.' });
  },
});

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  cli.runApp(
    new ServerOptions({
      agent: fileURLToPath(import.meta.url),
      wsURL: process.env.LIVEKIT_URL ?? 'ws://127.0.0.1:7880',
      apiKey: process.env.LIVEKIT_API_KEY ?? 'devkey',
      apiSecret: process.env.LIVEKIT_API_SECRET ?? 'secret',
    }),
  );
}
