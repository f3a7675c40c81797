// SPDX-License-Identifier: GPL-3.0-or-later
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, until } from './agentHarness.js';
import { startPluginHarness, type PluginHarness } from './pluginHarness.js';

const REPLY =
  'Hello there, nice to meet you today. I can help you with your account. ' +
  'What would you like to do first?';
const SENTENCES = [
  'Hello there, nice to meet you today.',
  'I can help you with your account.',
  'What would you like to do first?',
];

let h: PluginHarness;
beforeAll(async () => {
  h = await startPluginHarness({ msPerChar: 15 });
});
afterAll(() => h?.close());

describe('text mode: the avatar speaks the agent', () => {
  it('turns a multi-sentence reply into ordered /speak calls and one committed message', async () => {
    const s = await h.start({ responses: [{ input: 'hello', content: REPLY }] });
    const result = s.session.run({ userInput: 'hello' });
    await result.wait();
    result.expect.nextEvent().isMessage({ role: 'assistant' });
    result.expect.noMoreEvents();

    const speaks = s.sim.log.filter((e) => e.event === 'speak').map((e) => e.text);
    expect(speaks).toEqual(SENTENCES);
    expect(s.sim.log.some((e) => e.event === 'interrupt')).toBe(false);
    const messages = s.assistantMessages();
    expect(messages).toHaveLength(1);
    expect(messages[0]!.textContent).toBe(REPLY);
    expect(messages[0]!.interrupted).toBe(false);

    // `speaking` lasts as long as the avatar really speaks, then the agent listens again.
    const firstStart = s.sim.log.find((e) => e.event === 'start')!.at;
    const lastFinal = s.sim.log.filter((e) => e.event === 'final').at(-1)!.at;
    const speaking = s.states.find((x) => x.state === 'speaking')!;
    const after = s.states.find((x) => x.at >= speaking.at && x.state === 'listening')!;
    // Speaking starts with the avatar's first word (loose bound for a loaded machine).
    expect(speaking.at - firstStart).toBeLessThan(1_500);
    expect(after.at).toBeGreaterThanOrEqual(lastFinal);
    expect(after.at - speaking.at).toBeGreaterThanOrEqual(0.8 * (lastFinal - firstStart));
    await until(() => s.session.agentState === 'listening', 2_000, 'listening');
  });

  it('commits only the heard prefix when interrupted mid-reply, and the avatar goes silent', async () => {
    const s = await h.start({ responses: [{ input: 'hello', content: REPLY }] });
    const handle = s.session.generateReply({ userInput: 'hello' });
    // Interrupt during the second sentence, a few words in.
    await until(
      () => s.sim.finals().length === 1 && s.sim.speaking,
      10_000,
      'the second sentence to play',
    );
    await sleep(250);
    await s.session.interrupt().await;
    await handle.waitForPlayout();
    const interruptAt = s.sim.log.find((e) => e.event === 'interrupt')?.at;
    expect(interruptAt).toBeDefined();

    const heard = s.sim.finals().filter(Boolean).join(' ');
    expect(heard.startsWith(SENTENCES[0]!)).toBe(true);
    expect(heard.length).toBeLessThan(SENTENCES[0]!.length + 1 + SENTENCES[1]!.length);
    const messages = s.assistantMessages();
    expect(messages).toHaveLength(1);
    expect(messages[0]!.interrupted).toBe(true);
    expect(messages[0]!.textContent).toBe(heard);

    // Silent: nothing plays after the interrupt; the third sentence, queued at the avatar as
    // the reply streamed, was dropped unheard.
    await sleep(600);
    expect(s.sim.speaking).toBe(false);
    expect(s.sim.log.filter((e) => e.event === 'start' && e.at > interruptAt!)).toEqual([]);
    expect(s.sim.log.some((e) => e.event === 'start' && e.text === SENTENCES[2])).toBe(false);
    expect(s.session.agentState).toBe('listening');
  });

  // On a loaded machine the avatar stopped, and reported what was heard, more than the old
  // 750 ms grace after the interrupt: the chat history kept the last interim, words short of
  // what the frontend showed as heard.
  it('commits what the avatar reports heard even when its reports come late', async () => {
    const s = await h.start({ responses: [{ input: 'hello', content: REPLY }] });
    const speed = h.media.msPerChar;
    h.media.msPerChar = 120; // a second sentence of about 4 s
    s.sim.interruptLagMs = 800;
    try {
      const handle = s.session.generateReply({ userInput: 'hello' });
      await until(
        () => s.sim.finals().length === 1 && s.sim.speaking,
        20_000,
        'the second sentence to play',
      );
      await sleep(300);
      await s.session.interrupt().await;
      await handle.waitForPlayout();
    } finally {
      h.media.msPerChar = speed;
    }
    await until(() => !s.sim.speaking, 5_000, 'the avatar to stop');
    const heard = s.sim.finals().filter(Boolean).join(' ');
    expect(heard.length).toBeGreaterThan(SENTENCES[0]!.length + 1);
    expect(heard.length).toBeLessThan(SENTENCES[0]!.length + 1 + SENTENCES[1]!.length);
    const messages = s.assistantMessages();
    expect(messages).toHaveLength(1);
    expect(messages[0]!.interrupted).toBe(true);
    expect(messages[0]!.textContent).toBe(heard);
  }, 30_000);

  it('interrupts on a barge-in the framework decides (scripted VAD)', async () => {
    const s = await h.start({ responses: [{ input: 'hello', content: REPLY }], withVad: true });
    const handle = s.session.generateReply({ userInput: 'hello' });
    await until(() => s.session.agentState === 'speaking', 10_000, 'speaking');
    await sleep(300);
    s.vad!.startOfSpeech();
    s.vad!.speaking(600);
    await handle.waitForPlayout();
    expect(handle.interrupted).toBe(true);
    expect(s.sim.log.filter((e) => e.event === 'interrupt')).toHaveLength(1);
    const message = s.assistantMessages()[0]!;
    expect(message.interrupted).toBe(true);
    expect(message.textContent).toBe(s.sim.finals().filter(Boolean).join(' '));
    expect(REPLY.startsWith(message.textContent ?? '')).toBe(true);
    s.vad!.endOfSpeech(800);
  });

  it('speaks say() through the avatar', async () => {
    const s = await h.start({});
    const handle = s.session.say('Welcome back. How can I help you today?');
    await handle.waitForPlayout();
    expect(s.sim.log.filter((e) => e.event === 'speak').map((e) => e.text)).toEqual([
      'Welcome back.',
      'How can I help you today?',
    ]);
    expect(s.sim.finals()).toEqual(['Welcome back.', 'How can I help you today?']);
    expect(s.assistantMessages().map((m) => m.textContent)).toEqual([
      'Welcome back. How can I help you today?',
    ]);
  });
});
