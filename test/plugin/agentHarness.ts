// SPDX-License-Identifier: GPL-3.0-or-later
// AgentSessions without a room, as agents-js tests run them: FakeLLM replies, text input through
// session.run(), and a scripted VAD + audio input for barge-in.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  initializeLogger,
  llm,
  VAD,
  type VADEvent,
  VADEventType,
  VADStream,
  voice,
} from '@livekit/agents';
import { AudioFrame } from '@livekit/rtc-node';
import { ReadableStream, type ReadableStreamDefaultController } from 'node:stream/web';

initializeLogger({ pretty: false, level: process.env.VISAGE_TEST_LOG_LEVEL ?? 'silent' });

export { sleep };

export async function until(check: () => boolean, timeoutMs = 10_000, what = 'condition') {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** A VAD whose events the test emits by hand (real VAD/VADStream subclasses). */
class ScriptedVADStream extends VADStream {
  constructor(vad: VAD) {
    super(vad);
    void this.#drain();
  }

  async #drain(): Promise<void> {
    try {
      while (!this.closed) {
        const { done } = await this.inputReader.read();
        if (done) break;
      }
    } catch {
      // detached or closed
    }
  }

  emitEvent(ev: VADEvent): void {
    this.sendVADEvent(ev);
  }
}

export class ScriptedVAD extends VAD {
  label = 'scripted-vad';
  readonly streams: ScriptedVADStream[] = [];

  constructor() {
    super({ updateInterval: 32 });
  }

  stream(): ScriptedVADStream {
    const stream = new ScriptedVADStream(this);
    this.streams.push(stream);
    return stream;
  }

  /** The user starts talking. */
  startOfSpeech(): void {
    this.#emit(vadEvent(VADEventType.START_OF_SPEECH));
  }

  /** The user has been talking for `ms` (past the interruption threshold, this barges in). */
  speaking(ms: number): void {
    this.#emit(vadEvent(VADEventType.INFERENCE_DONE, { speechDuration: ms, speaking: true }));
  }

  endOfSpeech(ms: number): void {
    this.#emit(vadEvent(VADEventType.END_OF_SPEECH, { speechDuration: ms, speaking: false }));
  }

  #emit(ev: VADEvent): void {
    const stream = this.streams.at(-1);
    if (!stream) throw new Error('the session opened no VAD stream');
    stream.emitEvent(ev);
  }
}

function vadEvent(type: VADEventType, options: Partial<VADEvent> = {}): VADEvent {
  return {
    type,
    samplesIndex: 0,
    timestamp: Date.now(),
    speechDuration: 0,
    silenceDuration: 0,
    frames: [],
    probability: 1,
    inferenceDuration: 0,
    speaking: type === VADEventType.START_OF_SPEECH,
    rawAccumulatedSilence: 0,
    rawAccumulatedSpeech: 0,
    ...options,
  };
}

/** Silence from "the user's microphone", so the VAD branch of the pipeline runs. */
export class SilentMicrophone extends voice.AudioInput {
  #controller!: ReadableStreamDefaultController<AudioFrame>;
  readonly #pump: NodeJS.Timeout;

  constructor() {
    super();
    this.multiStream.addInputStream(
      new ReadableStream<AudioFrame>({ start: (c) => void (this.#controller = c) }),
    );
    this.#pump = setInterval(() => {
      try {
        this.#controller.enqueue(new AudioFrame(new Int16Array(800), 16_000, 1, 800));
      } catch {
        clearInterval(this.#pump);
      }
    }, 50);
  }

  override async close(): Promise<void> {
    clearInterval(this.#pump);
    await super.close();
  }
}

export interface SessionUnderTest {
  session: voice.AgentSession;
  vad?: ScriptedVAD;
  /** Every agent state in order, with the time it was entered. */
  states: Array<{ state: string; at: number }>;
  assistantMessages(): llm.ChatMessage[];
  close(): Promise<void>;
}

/** An AgentSession with a FakeLLM; `withVad` adds the scripted VAD and a silent microphone. */
export function agentSession(
  responses: voice.testing.FakeLLMResponse[],
  options: { withVad?: boolean } = {},
): SessionUnderTest {
  const vad = options.withVad ? new ScriptedVAD() : undefined;
  const session = new voice.AgentSession({
    llm: new voice.testing.FakeLLM(responses),
    vad: vad ?? null,
    aecWarmupDuration: null,
    userAwayTimeout: null,
    turnHandling: vad
      ? {
          turnDetection: 'vad',
          interruption: { mode: 'vad', resumeFalseInterruption: false, minDuration: 300 },
        }
      : { turnDetection: null, interruption: { resumeFalseInterruption: false } },
  });
  let microphone: SilentMicrophone | undefined;
  if (vad) {
    microphone = new SilentMicrophone();
    session.input.audio = microphone;
  }
  const states: SessionUnderTest['states'] = [];
  session.on(voice.AgentSessionEventTypes.AgentStateChanged, (ev) =>
    states.push({ state: ev.newState, at: Date.now() }),
  );
  return {
    session,
    vad,
    states,
    assistantMessages: () =>
      session.history.items.filter(
        (item): item is llm.ChatMessage => item.type === 'message' && item.role === 'assistant',
      ),
    close: async () => {
      await session.close().catch(() => undefined);
      await microphone?.close();
    },
  };
}

export const agent = () => new voice.Agent({ instructions: 'You are a test agent.' });
