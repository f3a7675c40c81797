// SPDX-License-Identifier: Apache-2.0
// A conversational bot worker: LiveKit Agents + the Visage plugin + an LLM through the `openai`
// package. Without an STT the user talks to it by text chat (`lk.chat` text streams, which
// LiveKit frontends send); the avatar speaks every reply in its own voice.
//
//   npx visage dev                                    # embedded LiveKit on :7880, API on :8080
//   export $(npx visage dev --print-livekit-credentials)   # LIVEKIT_URL, _API_KEY, _API_SECRET
//   VISAGE_API_KEY=sk_... OPENAI_BASE_URL=... npx tsx examples/agent-worker/agent.ts dev
//   VISAGE_API_KEY=sk_... npx tsx examples/agent-worker/agent.ts dev --offline   # no LLM needed
//   VISAGE_AVATAR_IMAGE=me.jpg ...                     # your own portrait as the avatar
import { fileURLToPath } from 'node:url';
import { cli, defineAgent, type JobContext, log, ServerOptions, voice } from '@livekit/agents';
import { AvatarSession } from '@visage-avatar/livekit-plugin';
import { EchoLLM } from './echoLlm.js';
import { llmHelp, llmProblem } from './llmCheck.js';
import { OpenAICompatibleLLM } from './openaiLlm.js';

/** Set by `--offline` in the worker process; the job processes it starts inherit it. */
const OFFLINE_ENV = 'VISAGE_AGENT_OFFLINE';

export default defineAgent({
  entry: async (ctx: JobContext) => {
    await ctx.connect();
    const offline = process.env[OFFLINE_ENV] === '1';
    const session = new voice.AgentSession({
      llm: offline ? new EchoLLM() : new OpenAICompatibleLLM(),
      // No STT/VAD configured: text chat in, avatar speech out.
      vad: null,
      turnHandling: { turnDetection: null, interruption: { resumeFalseInterruption: false } },
    });
    // A refused key, an unknown model, a server that went away: say so, with what to set.
    session.on(voice.AgentSessionEventTypes.Error, (ev) => {
      log().error({ error: ev.error }, llmHelp('the LLM failed'));
    });
    // A portrait (VISAGE_AVATAR_IMAGE=path/to/photo.jpg) becomes a photo avatar once per key and
    // picture; otherwise a stock avatar.
    const image = process.env.VISAGE_AVATAR_IMAGE;
    const avatar = new AvatarSession({
      ...(image
        ? { avatarImage: image }
        : { avatarId: process.env.VISAGE_AVATAR_ID ?? 'avt_Ada000000000000000000001' }),
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
      // Commit exactly what the avatar said when it is interrupted (see
      // packages/livekit-plugin/src/README.md).
      outputOptions: { syncTranscription: false },
    });
    session.generateReply({ instructions: 'Greet the user and offer your help.' });
  },
});

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!process.env.LIVEKIT_API_KEY || !process.env.LIVEKIT_API_SECRET) {
    console.error(
      'Set LIVEKIT_API_KEY and LIVEKIT_API_SECRET (and LIVEKIT_URL): for `visage dev`, run\n' +
        '  export $(npx visage dev --print-livekit-credentials)',
    );
    process.exit(2);
  }
  const offlineFlag = process.argv.indexOf('--offline');
  if (offlineFlag >= 0) {
    process.argv.splice(offlineFlag, 1); // the agents CLI does not know it
    process.env[OFFLINE_ENV] = '1';
  } else {
    // Fail at start, loudly, rather than an avatar that joins and never speaks.
    const problem = await llmProblem();
    if (problem) {
      console.error(llmHelp(problem));
      process.exit(1);
    }
  }
  cli.runApp(
    new ServerOptions({
      agent: fileURLToPath(import.meta.url),
      wsURL: process.env.LIVEKIT_URL ?? 'ws://127.0.0.1:7880',
      apiKey: process.env.LIVEKIT_API_KEY,
      apiSecret: process.env.LIVEKIT_API_SECRET,
      // Each job starts a fresh process; the agents default (10 s) is short for a busy laptop,
      // and a job whose process starts late is dropped.
      initializeProcessTimeout: 60_000,
    }),
  );
}
