// SPDX-License-Identifier: GPL-3.0-or-later
import { createTtsEngine, DEFAULT_TTS_ENGINE, type TtsOptions } from './ttsEngineRegistry.js';
import type { TtsEngine, TtsEngineId } from './ttsEngine.js';

/**
 * The engines of one process, created on first use: new voices are made with the default
 * (`defaultEngine`), and every voice keeps speaking with the engine that made it.
 */
export class TtsEngines {
  readonly defaultId: TtsEngineId;
  private readonly engines = new Map<TtsEngineId, TtsEngine>();

  /**
   * Engines are made from `options` (none: espeak alone); `preset` engines are used as they are
   * (tests, embedding).
   */
  constructor(
    private readonly options: TtsOptions = {},
    preset: Partial<Record<TtsEngineId, TtsEngine>> = {},
  ) {
    this.defaultId = options.defaultEngine ?? DEFAULT_TTS_ENGINE;
    for (const [id, engine] of Object.entries(preset)) this.engines.set(id as TtsEngineId, engine);
  }

  get(id: TtsEngineId): TtsEngine {
    let engine = this.engines.get(id);
    if (!engine) {
      engine = createTtsEngine(id, this.options);
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
