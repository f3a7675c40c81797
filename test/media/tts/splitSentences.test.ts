// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import { splitClauses, splitSentences } from '../../../src/media/tts/index.js';

const texts = (input: string, maxChars?: number) =>
  splitSentences(input, { maxChars }).map((c) => c.text);

describe('splitSentences', () => {
  it('splits two sentences and keeps offsets into the input', () => {
    const input = '  Hello there. How are you today?  ';
    const chunks = splitSentences(input);
    expect(chunks.map((c) => c.text)).toEqual(['Hello there.', 'How are you today?']);
    for (const c of chunks) expect(input.slice(c.start, c.end)).toBe(c.text);
  });

  it('does not split after abbreviations, initials or inside decimals', () => {
    expect(
      texts('Dr. Smith paid $3.50 for it, i.e. a bargain. Then Mr. J. R. Jones left.'),
    ).toEqual(['Dr. Smith paid $3.50 for it, i.e. a bargain.', 'Then Mr. J. R. Jones left.']);
    expect(texts('Pi is about 3.14159. It never ends.')).toEqual([
      'Pi is about 3.14159.',
      'It never ends.',
    ]);
  });

  it('handles ! ? ellipses, quotes and lower-case continuations', () => {
    expect(texts('Wait... what? "Really!" she said. Yes!! Go.')).toEqual([
      'Wait... what?',
      '"Really!" she said.',
      'Yes!!',
      'Go.',
    ]);
  });

  it('splits at line breaks and drops empty lines', () => {
    expect(texts('First line\n\nSecond line\r\nThird')).toEqual([
      'First line',
      'Second line',
      'Third',
    ]);
  });

  it('cuts run-on sentences at clause boundaries so no chunk exceeds maxChars', () => {
    const input = 'one two three, four five six; seven eight nine ten eleven twelve thirteen.';
    const chunks = splitSentences(input, { maxChars: 30 });
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) {
      expect(c.text.length).toBeLessThanOrEqual(30);
      expect(input.slice(c.start, c.end)).toBe(c.text);
    }
    expect(chunks[0]!.text).toBe('one two three, four five six;');
    expect(chunks.map((c) => c.text).join(' ')).toBe(input);
  });

  it('can keep the first chunk shorter so speech starts sooner', () => {
    const input =
      'When the train finally pulled into the station after the long delay, everyone cheered, ' +
      'and the conductor apologised twice. Short one.';
    const chunks = splitSentences(input, { firstMaxChars: 60 });
    expect(chunks.map((c) => c.text)).toEqual([
      'When the train finally pulled into the station after the',
      'long delay, everyone cheered, and the conductor apologised twice.',
      'Short one.',
    ]);
    const byClause = splitSentences(input, { firstMaxChars: 80 });
    expect(byClause[0]!.text).toBe(
      'When the train finally pulled into the station after the long delay,',
    );
  });

  it('returns nothing for blank text', () => {
    expect(splitSentences('   \n ')).toEqual([]);
  });
});

describe('splitClauses', () => {
  it('cuts each sentence after its clause punctuation, keeping offsets into the input', () => {
    const input =
      'Well, I think so; we could go: now — or later. Numbers like 1,000 stay whole, see?';
    const chunks = splitClauses(splitSentences(input), input);
    expect(chunks.map((c) => c.text)).toEqual([
      'Well,',
      'I think so;',
      'we could go:',
      'now —',
      'or later.',
      'Numbers like 1,000 stay whole,',
      'see?',
    ]);
    for (const c of chunks) expect(input.slice(c.start, c.end)).toBe(c.text);
  });

  it('never makes a clause of punctuation alone (it would be a pause of its own)', () => {
    const input = ', , ; Well, , , then: — go';
    expect(splitClauses(splitSentences(input), input).map((c) => c.text)).toEqual([
      ', , ; Well,',
      ', , then:',
      '— go',
    ]);
    // Only the length limit cuts it (at spaces, with the short pause between words).
    const commas = ', '.repeat(2000);
    const sentences = splitSentences(commas);
    expect(splitClauses(sentences, commas)).toEqual(sentences);
  });

  it('leaves sentences without clause punctuation, and trailing punctuation, as they are', () => {
    const input = 'No commas here. Ends with a comma,';
    const chunks = splitSentences(input);
    expect(splitClauses(chunks, input)).toEqual(chunks);
    expect(splitClauses([], '')).toEqual([]);
  });
});
