// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * One espeak-ng instance per thread, loaded on first use and shared by every EspeakEngine on
 * that thread (the main thread, or the engine's worker thread; see espeakThread.ts).
 *
 * `@echogarden/espeak-ng-emscripten` is espeak-ng 1.52 compiled to plain JS (wasm2js) with its
 * 24 MB data file: no system package, nothing downloaded. espeak-ng keeps global state and
 * synthesis is synchronous, so calls never interleave within a thread; each call sets its own
 * voice, rate and range before synthesizing.
 *
 * The emscripten module has no type declarations; the small surface used here is typed below.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

export interface EspeakEvent {
  type:
    | 'list_terminated'
    | 'word'
    | 'sentence'
    | 'mark'
    | 'play'
    | 'end'
    | 'msg_terminated'
    | 'phoneme'
    | 'samplerate';
  /** 1-based position in the input, counted in Unicode code points. */
  text_position: number;
  /** Length of the word in code points (word events). */
  word_length: number;
  /** Milliseconds from the start of this synthesis call. */
  audio_position: number;
  /** Phoneme IPA (phoneme events), word/sentence ordinal (word/sentence events). */
  id?: string | number;
}

interface EspeakWorker {
  readonly samplerate: number;
  set_voice(name: string): number;
  set_rate(wpm: number): void;
  set_range(range: number): void;
  set_pitch(pitch: number): void;
  /** Return true from the callback to abort synthesis. */
  synthesize(text: string, callback: (pcm: Int16Array, events: EspeakEvent[]) => boolean): void;
}

interface EspeakModule {
  eSpeakNGWorker: new () => EspeakWorker;
  FS: { writeFile(path: string, data: string): void };
}

/** A loaded espeak-ng: module, synthesizer and the variant files written so far. */
export interface EspeakRuntime {
  module: EspeakModule;
  worker: EspeakWorker;
  sampleRate: number;
  variants: Set<string>;
}

/** Everything one synthesis needs, as plain data (it crosses to the worker thread as is). */
export interface RawSynthesisRequest {
  text: string;
  /** espeak voice name with variant suffix, e.g. `en-us+visage_p82_118_f100`. */
  voiceName: string;
  variantName: string;
  variantFile: string;
  wordsPerMinute: number;
  range: number;
}

export interface RawSynthesisResult {
  sampleRate: number;
  pcm: Int16Array;
  events: EspeakEvent[];
}

/** File URL of the emscripten module, for loading it in a worker thread. */
export function espeakModuleUrl(): string {
  const require = createRequire(import.meta.url);
  return pathToFileURL(require.resolve('@echogarden/espeak-ng-emscripten')).href;
}

/**
 * Run one synthesis on a loaded runtime. Deliberately self-contained (no imports, no outer
 * variables, no named inner functions): espeakThread.ts ships its source text to the worker
 * thread, so the inline and off-thread paths run the very same code. `onPart`, when given, sees
 * each buffer of audio as espeak-ng produces it (100 ms each), with the events espeak-ng reported
 * with it (a word's event comes with the audio it starts in), before the call returns.
 */
export function rawEspeakSynthesis(
  runtime: EspeakRuntime,
  request: RawSynthesisRequest,
  onPart?: (pcm: Int16Array, sampleRate: number, events: EspeakEvent[]) => void,
): RawSynthesisResult {
  if (!runtime.variants.has(request.variantName)) {
    runtime.module.FS.writeFile(
      '/usr/share/espeak-ng-data/voices/!v/' + request.variantName,
      request.variantFile,
    );
    runtime.variants.add(request.variantName);
  }
  const synth = runtime.worker;
  if (synth.set_voice(request.voiceName) !== 0) {
    throw new Error('espeak-ng has no voice named ' + request.voiceName);
  }
  synth.set_rate(request.wordsPerMinute);
  synth.set_range(request.range);
  synth.set_pitch(50); // neutral: the variant's pitch line carries the voice's pitch
  const chunks: Int16Array[] = [];
  const events: EspeakEvent[] = [];
  let length = 0;
  synth.synthesize(request.text, (pcm, chunkEvents) => {
    chunks.push(pcm);
    length += pcm.length;
    if (onPart && (pcm.length > 0 || chunkEvents.length > 0)) {
      onPart(pcm.slice(), runtime.sampleRate, chunkEvents.slice());
    }
    for (const event of chunkEvents) events.push(event);
    return false;
  });
  const pcm = new Int16Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    pcm.set(chunk, offset);
    offset += chunk.length;
  }
  return { sampleRate: runtime.sampleRate, pcm, events };
}

let runtime: Promise<EspeakRuntime> | undefined;

async function load(): Promise<EspeakRuntime> {
  const { default: createModule } = await import('@echogarden/espeak-ng-emscripten');
  const module = (await createModule()) as EspeakModule;
  const worker = new module.eSpeakNGWorker();
  return { module, worker, sampleRate: worker.samplerate, variants: new Set() };
}

/** The espeak-ng runtime of this thread (about 0.2-1 s to load the first time, then free). */
export function espeakRuntime(): Promise<EspeakRuntime> {
  runtime ??= load().catch((error: unknown) => {
    runtime = undefined; // let a later call retry instead of caching the failure
    throw error;
  });
  return runtime;
}
