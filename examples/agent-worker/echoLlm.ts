// SPDX-License-Identifier: Apache-2.0
// The offline stand-in for an LLM (`agent.ts dev --offline`): it greets, then says back what the
// user typed. No network, no API key: a newcomer sees the whole loop (dispatch, the avatar
// joining, a typed message, the avatar answering) before wiring up a real model.
import { type APIConnectOptions, DEFAULT_API_CONNECT_OPTIONS, llm } from '@livekit/agents';

export const OFFLINE_GREETING =
  'Hello! I am running offline, without a language model. Type something and I will say it back.';

export class EchoLLM extends llm.LLM {
  label(): string {
    return 'echo (offline)';
  }

  override get model(): string {
    return 'echo';
  }

  chat({
    chatCtx,
    toolCtx,
    connOptions = DEFAULT_API_CONNECT_OPTIONS,
  }: {
    chatCtx: llm.ChatContext;
    toolCtx?: llm.ToolContext;
    connOptions?: APIConnectOptions;
  }): llm.LLMStream {
    return new EchoStream(this, { chatCtx, toolCtx, connOptions });
  }
}

class EchoStream extends llm.LLMStream {
  protected async run(): Promise<void> {
    const messages = (await this.chatCtx.toProviderFormat('openai')) as Array<{
      role: string;
      content: unknown;
    }>;
    const lastUser = [...messages].reverse().find((m) => m.role === 'user');
    const said = typeof lastUser?.content === 'string' ? lastUser.content.trim() : '';
    const reply = said ? `You said: ${said}` : OFFLINE_GREETING;
    // Streamed in word-sized pieces, as a real model would.
    for (const piece of reply.match(/\S+\s*/g) ?? []) {
      this.queue.put({ id: 'echo', delta: { role: 'assistant', content: piece } });
    }
  }
}
