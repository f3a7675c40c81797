// SPDX-License-Identifier: Apache-2.0
import { type APIConnectOptions, shortuuid, tokenize, tts } from '@livekit/agents';
import { MARKER_SAMPLE_RATE, markerFrame } from './markerFrame.js';

/**
 * The TTS installed in text mode. It synthesizes nothing: it splits the text into sentences and
 * emits one silent marker frame per sentence ({@link markerFrame}); the avatar output turns those
 * into `/speak` calls at playout time, and Visage speaks them with its own voice.
 *
 * Streaming with `alignedTranscript: false` on purpose: a `tts.StreamAdapter` would advertise
 * aligned transcripts and the pipeline would commit sentences glued together without spaces.
 */
export class VisageTextTTS extends tts.TTS {
  label = 'visage.VisageTextTTS';
  readonly sentenceTokenizer: tokenize.SentenceTokenizer;

  constructor(sentenceTokenizer?: tokenize.SentenceTokenizer) {
    super(MARKER_SAMPLE_RATE, 1, { streaming: true, alignedTranscript: false });
    this.sentenceTokenizer = sentenceTokenizer ?? new tokenize.basic.SentenceTokenizer();
  }

  override get provider(): string {
    return 'visage';
  }

  override get model(): string {
    return 'visage-avatar';
  }

  synthesize(
    text: string,
    connOptions?: APIConnectOptions,
    abortSignal?: AbortSignal,
  ): VisageTextChunkedStream {
    return new VisageTextChunkedStream(this, text, connOptions, abortSignal);
  }

  stream(options?: { connOptions?: APIConnectOptions }): VisageTextStream {
    return new VisageTextStream(this, options?.connOptions);
  }
}

/** Streaming input: sentences are emitted as the tokenizer completes them (the last on flush). */
export class VisageTextStream extends tts.SynthesizeStream {
  label = 'visage.VisageTextStream';
  readonly #tokenizer: tokenize.SentenceTokenizer;

  constructor(owner: VisageTextTTS, connOptions?: APIConnectOptions) {
    super(owner, connOptions);
    this.#tokenizer = owner.sentenceTokenizer;
  }

  protected async run(): Promise<void> {
    const sentences = this.#tokenizer.stream();
    const requestId = shortuuid('visage_');
    const forwardInput = async () => {
      for await (const input of this.input) {
        if (this.abortController.signal.aborted) break;
        if (input === tts.SynthesizeStream.FLUSH_SENTINEL) sentences.flush();
        else sentences.pushText(input);
      }
      sentences.endInput();
      sentences.close();
    };
    const emitMarkers = async () => {
      for await (const sentence of sentences) {
        if (this.abortController.signal.aborted) break;
        const text = sentence.token.trim();
        if (!text) continue;
        this.markStarted();
        this.queue.put({
          requestId,
          segmentId: sentence.segmentId,
          frame: markerFrame(text),
          deltaText: text,
          final: false,
        });
      }
      this.queue.put(tts.SynthesizeStream.END_OF_STREAM);
    };
    await Promise.all([forwardInput(), emitMarkers()]);
  }
}

/** One-shot input (`synthesize`): all sentences of the text at once. */
export class VisageTextChunkedStream extends tts.ChunkedStream {
  label = 'visage.VisageTextChunkedStream';
  readonly #tokenizer: tokenize.SentenceTokenizer;

  constructor(
    owner: VisageTextTTS,
    text: string,
    connOptions?: APIConnectOptions,
    abortSignal?: AbortSignal,
  ) {
    super(text, owner, connOptions, abortSignal);
    this.#tokenizer = owner.sentenceTokenizer;
  }

  protected async run(): Promise<void> {
    const requestId = shortuuid('visage_');
    const sentences = this.#tokenizer
      .tokenize(this.inputText)
      .map((s) => s.trim())
      .filter(Boolean);
    sentences.forEach((text, i) => {
      this.queue.put({
        requestId,
        segmentId: requestId,
        frame: markerFrame(text),
        deltaText: text,
        final: i === sentences.length - 1,
      });
    });
  }
}
