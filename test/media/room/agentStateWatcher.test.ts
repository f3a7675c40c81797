// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import { isQuestion } from '../../../src/media/room/agentStateWatcher.js';

describe("the user's question, from a final transcript segment", () => {
  it.each([
    'Do you have anything at eight?',
    'what time is it ?  ',
    '¿Dónde está la estación?',
    'Is it "really" that "cheap?"',
    '今何時ですか？',
    'هل أنت هنا؟',
  ])('%s is a question', (text) => expect(isQuestion(text)).toBe(true));

  it.each([
    'I would like to book a table for two.',
    'Why? Because I said so.',
    'question mark',
    '',
  ])('%s is not', (text) => expect(isQuestion(text)).toBe(false));
});
