// SPDX-License-Identifier: Apache-2.0
// A minimal agents `llm.LLM` over the `openai` package, so the example runs against any
// OpenAI-compatible endpoint (OpenAI, a local llama.cpp/vLLM/Ollama server, …) via
// OPENAI_BASE_URL. Text replies only; a production agent would use a full LLM plugin.
import { type APIConnectOptions, DEFAULT_API_CONNECT_OPTIONS, llm } from '@livekit/agents';
import OpenAI from 'openai';

export interface OpenAICompatibleLLMOptions {
  /** Default $OPENAI_MODEL, else gpt-4o-mini. */
  model?: string;
  /** Default $OPENAI_BASE_URL (the package's own default otherwise). */
  baseURL?: string;
  /** Default $OPENAI_API_KEY; local servers usually accept anything. */
  apiKey?: string;
}

export class OpenAICompatibleLLM extends llm.LLM {
  readonly client: OpenAI;
  readonly modelName: string;

  constructor(options: OpenAICompatibleLLMOptions = {}) {
    super();
    this.modelName = options.model ?? process.env.OPENAI_MODEL ?? 'gpt-4o-mini';
    this.client = new OpenAI({
      baseURL: options.baseURL ?? process.env.OPENAI_BASE_URL,
      apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'not-needed',
    });
  }

  label(): string {
    return 'openai-compatible';
  }

  override get model(): string {
    return this.modelName;
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
    return new OpenAICompatibleStream(this, { chatCtx, toolCtx, connOptions });
  }
}

class OpenAICompatibleStream extends llm.LLMStream {
  readonly #owner: OpenAICompatibleLLM;

  constructor(
    owner: OpenAICompatibleLLM,
    params: { chatCtx: llm.ChatContext; toolCtx?: llm.ToolContext; connOptions: APIConnectOptions },
  ) {
    super(owner, params);
    this.#owner = owner;
  }

  protected async run(): Promise<void> {
    const messages = (await this.chatCtx.toProviderFormat(
      'openai',
    )) as OpenAI.Chat.ChatCompletionMessageParam[];
    const stream = await this.#owner.client.chat.completions.create(
      { model: this.#owner.modelName, messages, stream: true },
      { signal: this.abortController.signal, timeout: this.connOptions.timeoutMs },
    );
    for await (const chunk of stream) {
      const content = chunk.choices[0]?.delta?.content;
      if (content) this.queue.put({ id: chunk.id, delta: { role: 'assistant', content } });
    }
  }
}
