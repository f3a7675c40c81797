import { createTtsEngine, defaultTtsEngineId, type TtsSettings } from './ttsEngineRegistry.js';
import type { TtsEngine, TtsEngineId } from './ttsEngine.js';

/**
 * The engines of one process, created on first use: new voices are made with the default
 * (`VISAGE_TTS_ENGINE`), and every voice keeps speaking with the engine that made it.
 */
export class TtsEngines {
  readonly defaultId: TtsEngineId;
  private readonly engines = new Map<TtsEngineId, TtsEngine>();

  /**
   * Engines are made from `settings` (none: espeak alone); `preset` engines are used as they are
   * (tests, embedding).
   */
  constructor(
    private readonly settings: TtsSettings = {},
    preset: Partial<Record<TtsEngineId, TtsEngine>> = {},
  ) {
    this.defaultId = defaultTtsEngineId(settings);
    for (const [id, engine] of Object.entries(preset)) this.engines.set(id as TtsEngineId, engine);
  }

  get(id: TtsEngineId): TtsEngine {
    let engine = this.engines.get(id);
    if (!engine) {
      engine = createTtsEngine(id, this.settings);
      this.engines.set(id, engine);
    }
    return engine;
  }

  get default(): TtsEngine {
    return this.get(this.defaultId);
  }

  async close(): Promise<void> {
    await Promise.all([...this.engines.values()].map((e) => e.close().catch(() => undefined)));
  }
}
