// SPDX-License-Identifier: GPL-3.0-or-later
import type { CharTiming } from '../providers/wordPhonemes.js';
import type { WordTiming } from '../ttsEngine.js';

/**
 * Character alignment. The service spells the durations `charsDurationsMs` (and some versions the
 * starts `charsStartTimesMs`); the singular spellings are read too, as LiveKit's plugin does.
 */
export interface ElevenLabsAlignment {
  chars: string[];
  charStartTimesMs?: number[];
  charsStartTimesMs?: number[];
  charsDurationsMs?: number[];
  charDurationsMs?: number[];
}

/** Builds words from character alignment that arrives message by message. */
export class WordAssembler {
  private cursor = 0;
  private current: WordTiming | undefined;

  constructor(private readonly text: string) {}

  /**
   * Characters of one message, `baseMs` = where its audio starts; returns the words it completed
   * and its characters (other than spaces) placed in the text.
   */
  push(a: ElevenLabsAlignment, baseMs: number): { words: WordTiming[]; chars: CharTiming[] } {
    const done: WordTiming[] = [];
    const chars: CharTiming[] = [];
    const starts = a.charStartTimesMs ?? a.charsStartTimesMs ?? [];
    const durations = a.charsDurationsMs ?? a.charDurationsMs ?? [];
    a.chars.forEach((ch, i) => {
      // The alignment follows the sent text character by character; resynchronise if not.
      let at = this.text.startsWith(ch, this.cursor)
        ? this.cursor
        : this.text.indexOf(ch, this.cursor);
      if (at < 0) at = this.cursor;
      this.cursor = at + ch.length;
      const startMs = baseMs + (starts[i] ?? 0);
      const endMs = startMs + (durations[i] ?? 0);
      if (/\s/.test(ch)) {
        if (this.current) done.push(this.current);
        this.current = undefined;
        return;
      }
      chars.push({ charIndex: at, startMs, endMs });
      if (this.current) {
        this.current.text += ch;
        this.current.charEnd = this.cursor;
        this.current.endMs = endMs;
      } else {
        this.current = { text: ch, charStart: at, charEnd: this.cursor, startMs, endMs };
      }
    });
    return { words: done, chars };
  }

  flush(): WordTiming[] {
    const last = this.current;
    this.current = undefined;
    return last ? [last] : [];
  }
}
