// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Split text into sentence chunks so that speech can start after the first chunk is synthesized
 * instead of after the whole text. Offsets are kept so that word timings of a chunk map back to
 * the full text (for transcripts of what was really heard).
 *
 * Rules: a sentence ends at `.`, `!`, `?` or `…` (plus closing quotes/brackets) followed by
 * whitespace and the end of text or something that can open a sentence, and at line breaks. A
 * period does not end a sentence after a known abbreviation (Dr., e.g., etc.) or a single-letter
 * initial, nor inside a number (3.14) or an ellipsis followed by lower case. Sentences longer than
 * `maxChars` are cut at the last clause punctuation (then the last space) before the limit, so a
 * run-on sentence cannot delay the first audio.
 */
export interface SentenceChunk {
  text: string;
  /** UTF-16 offsets of `text` in the input (`input.slice(start, end) === text`). */
  start: number;
  end: number;
}

export interface SplitSentencesOptions {
  /** Longest chunk before a forced split at a clause boundary. Default 240. */
  maxChars?: number;
  /**
   * Longest first chunk (default: maxChars). A shorter first chunk is synthesized sooner, so
   * speech starts sooner; later chunks are synthesized while earlier ones play.
   */
  firstMaxChars?: number;
}

// Lower-cased, without the trailing period. Titles and common Latin abbreviations that are
// followed by more of the same sentence far more often than they end one.
const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'mx',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'mt',
  'ft',
  'vs',
  'etc',
  'e.g',
  'i.e',
  'cf',
  'approx',
  'no',
  'nos',
  'vol',
  'fig',
  'figs',
  'inc',
  'ltd',
  'co',
  'corp',
  'dept',
  'est',
  'gen',
  'gov',
  'rev',
  'sgt',
  'capt',
  'lt',
  'col',
  'u.s',
  'u.k',
  'a.m',
  'p.m',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
]);

const CLOSERS = new Set(['"', "'", '”', '’', ')', ']', '}', '»']);

function isSpace(ch: string | undefined): boolean {
  return ch !== undefined && /\s/.test(ch);
}

/** The word (letters and inner periods) that ends right before index `dot`. */
function wordBefore(text: string, dot: number): string {
  let i = dot;
  while (i > 0 && /[\p{L}.]/u.test(text[i - 1]!)) i--;
  return text.slice(i, dot);
}

function isAbbreviationOrInitial(text: string, dot: number): boolean {
  const word = wordBefore(text, dot).toLowerCase();
  // Single letters are initials ("J. R. R. Tolkien"); a sentence rarely ends in one.
  return ABBREVIATIONS.has(word) || /^\p{L}$/u.test(word);
}

function pushTrimmed(chunks: SentenceChunk[], text: string, start: number, end: number): void {
  while (start < end && isSpace(text[start])) start++;
  while (end > start && isSpace(text[end - 1])) end--;
  if (end > start) chunks.push({ text: text.slice(start, end), start, end });
}

/** Clause punctuation: a chunk may end after one of these when a space follows. */
const CLAUSE_END = /[,;:—–]/;

function endsClause(text: string, i: number): boolean {
  return CLAUSE_END.test(text[i]!) && isSpace(text[i + 1]);
}

/**
 * Cut an over-long sentence at clause punctuation (or spaces) so no chunk exceeds its limit:
 * `firstLimit` for the first piece, `maxChars` for the rest.
 */
function splitLong(
  text: string,
  chunk: SentenceChunk,
  firstLimit: number,
  maxChars: number,
  out: SentenceChunk[],
) {
  let start = chunk.start;
  let pieceLimit = firstLimit;
  while (chunk.end - start > pieceLimit) {
    const limit = start + pieceLimit;
    let cut = -1;
    for (let i = limit - 1; i > start + pieceLimit / 3; i--) {
      if (endsClause(text, i)) {
        cut = i + 1;
        break;
      }
    }
    if (cut < 0) {
      const space = text.lastIndexOf(' ', limit);
      cut = space > start ? space + 1 : limit;
    }
    pushTrimmed(out, text, start, cut);
    start = cut;
    pieceLimit = maxChars;
  }
  pushTrimmed(out, text, start, chunk.end);
}

export function splitSentences(text: string, opts: SplitSentencesOptions = {}): SentenceChunk[] {
  const maxChars = Math.max(20, opts.maxChars ?? 240);
  const sentences: SentenceChunk[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\n' || ch === '\r') {
      pushTrimmed(sentences, text, start, i);
      start = i + 1;
      continue;
    }
    if (ch !== '.' && ch !== '!' && ch !== '?' && ch !== '…') continue;
    // Absorb runs of terminators ("?!", "...") and closing quotes/brackets.
    let runEnd = i + 1;
    while (runEnd < text.length && /[.!?…]/.test(text[runEnd]!)) runEnd++;
    let j = runEnd;
    while (j < text.length && CLOSERS.has(text[j]!)) j++;
    const terminators = text.slice(i, runEnd);
    i = j - 1;
    // No space after it: "3.14", "e.g.x", "example.com".
    if (j < text.length && !isSpace(text[j])) continue;
    let next = j;
    while (next < text.length && isSpace(text[next]) && text[next] !== '\n') next++;
    // A lower-case continuation ("wait... what", "Hello!" he said) stays in the sentence.
    if (next < text.length && /\p{Ll}/u.test(text[next]!)) continue;
    if (terminators === '.' && isAbbreviationOrInitial(text, runEnd - 1)) continue;
    pushTrimmed(sentences, text, start, j);
    start = j;
  }
  pushTrimmed(sentences, text, start, text.length);

  const firstMaxChars = Math.max(20, Math.min(maxChars, opts.firstMaxChars ?? maxChars));
  const out: SentenceChunk[] = [];
  for (const sentence of sentences) {
    const limit = out.length === 0 ? firstMaxChars : maxChars;
    if (sentence.text.length > limit) splitLong(text, sentence, limit, maxChars, out);
    else out.push(sentence);
  }
  return out;
}

/** A letter or a digit: something spoken. */
const SPOKEN = /[\p{L}\p{N}]/u;

/**
 * Every chunk cut after its clause punctuation too (`,` `;` `:` or a dash, followed by a space;
 * not "1,000"), for an engine whose pauses are placed between chunks: espeak-ng's prosody is
 * clause by clause, so a clause synthesized alone sounds as it does in its sentence (the same
 * length to the millisecond and the same pitch, measured), and only the pause after it changes.
 * A clause has something spoken in it: punctuation alone (", , ,") joins the next clause, so it
 * cannot become a pause of its own (4096 characters of it would be ten minutes of silence).
 */
export function splitClauses(chunks: readonly SentenceChunk[], text: string): SentenceChunk[] {
  const out: SentenceChunk[] = [];
  for (const chunk of chunks) {
    let start = chunk.start;
    let spoken = false;
    for (let i = chunk.start; i < chunk.end - 1; i++) {
      spoken ||= SPOKEN.test(text[i]!);
      if (!spoken || !endsClause(text, i)) continue;
      pushTrimmed(out, text, start, i + 1);
      start = i + 1;
      spoken = false;
    }
    pushTrimmed(out, text, start, chunk.end);
  }
  return out;
}
