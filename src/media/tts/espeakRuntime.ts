/**
 * One espeak-ng instance per thread, loaded on first use and shared by every EspeakEngine.
 *
 * `@echogarden/espeak-ng-emscripten` is espeak-ng 1.52 compiled to plain JS (wasm2js) with its
 * 24 MB data file: no system package, nothing downloaded. espeak-ng keeps global state and
 * synthesis is synchronous, so calls never interleave within a thread; each call sets its own
 * voice, rate and range before synthesizing.
 *
 * The emscripten module has no type declarations; the small surface used here is typed below.
 */

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
  set_volume(volume: number): void;
  /** Return true from the callback to abort synthesis. */
  synthesize(text: string, callback: (pcm: Int16Array, events: EspeakEvent[]) => boolean): void;
}

interface EspeakModule {
  eSpeakNGWorker: new () => EspeakWorker;
  FS: {
    writeFile(path: string, data: string): void;
  };
}

export interface EspeakRuntime {
  worker: EspeakWorker;
  sampleRate: number;
  /** Make sure a voice-variant file exists in the in-memory file system. */
  ensureVariant(name: string, contents: string): void;
}

const VARIANT_DIR = '/usr/share/espeak-ng-data/voices/!v';

let runtime: Promise<EspeakRuntime> | undefined;

async function load(): Promise<EspeakRuntime> {
  const { default: createModule } = await import('@echogarden/espeak-ng-emscripten');
  const module = (await createModule()) as EspeakModule;
  const worker = new module.eSpeakNGWorker();
  const written = new Set<string>();
  return {
    worker,
    sampleRate: worker.samplerate,
    ensureVariant(name, contents) {
      if (written.has(name)) return;
      module.FS.writeFile(`${VARIANT_DIR}/${name}`, contents);
      written.add(name);
    },
  };
}

/** The shared espeak-ng runtime (about 0.2 s to load the first time, then free). */
export function espeakRuntime(): Promise<EspeakRuntime> {
  runtime ??= load().catch((error: unknown) => {
    runtime = undefined; // let a later call retry instead of caching the failure
    throw error;
  });
  return runtime;
}
