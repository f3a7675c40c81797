// SPDX-License-Identifier: GPL-3.0-or-later
/** Lines held at most while a start-up runs; more are counted, not kept. */
const MAX_HELD = 2_000;

/** pino's numeric level of `warn`. */
const WARN = 40;

/**
 * Where `visage dev` sends its JSON log lines (its own, its media processes' and the LiveKit
 * child's): while the node starts they are held, so that the terminal shows the progress lines
 * and then the banner, not the banner drowned in JSON. Once the banner is printed, `open` writes
 * the held warnings and errors (the held info lines said what the progress lines say) and lets
 * every later line through. A start-up that fails writes every held line first: they say why.
 * `--verbose` passes every line through from the start.
 */
export class StartupLogGate {
  private held: string[] | undefined;
  private dropped = 0;

  constructor(
    private readonly out: { write(text: string): unknown },
    hold: boolean,
  ) {
    this.held = hold ? [] : undefined;
  }

  /** One line or several, each ending in a newline (pino writes them so). */
  write(text: string): void {
    if (!this.held) {
      this.out.write(text);
      return;
    }
    if (this.held.length < MAX_HELD) this.held.push(text);
    else this.dropped++;
  }

  /** Writes what was held (`all`, or only warnings and errors) and passes every later line. */
  open({ all = false } = {}): void {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    for (const text of held) if (all || levelOf(text) >= WARN) this.out.write(text);
    if (this.dropped > 0 && all) {
      this.out.write(`(${this.dropped} more log lines from the start-up were not kept)\n`);
    }
  }
}

/** A JSON line's pino level; a line that is not one (native output) counts as a warning. */
function levelOf(text: string): number {
  try {
    const level = (JSON.parse(text) as { level?: unknown }).level;
    return typeof level === 'number' ? level : WARN;
  } catch {
    return WARN;
  }
}
