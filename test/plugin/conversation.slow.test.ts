// SPDX-License-Identifier: GPL-3.0-or-later
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, until } from './agentHarness.js';
import { startPluginHarness, type PluginHarness } from './pluginHarness.js';

let h: PluginHarness;
beforeAll(async () => {
  h = await startPluginHarness({ msPerChar: 8 });
});
afterAll(() => h?.close());

/** Deterministic pseudo-random numbers (mulberry32), so a failure can be replayed. */
function seeded(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TURNS = 20;
const reply = (i: number) =>
  `This is reply number ${i}. It has a second sentence to speak. And a third one closes it.`;

describe('a conversation with barge-ins', () => {
  it(`never leaves the agent stuck in speaking over ${TURNS} turns with random barge-ins`, async () => {
    const seed = Number(process.env.VISAGE_TEST_SEED ?? 20261121);
    const random = seeded(seed);
    const s = await h.start({
      withVad: true,
      responses: Array.from({ length: TURNS }, (_, i) => ({
        input: `turn ${i}`,
        content: reply(i),
      })),
    });
    const outcomes: string[] = [];
    const handles: Array<{ interrupted: boolean }> = [];
    for (let i = 0; i < TURNS; i++) {
      const handle = s.session.generateReply({ userInput: `turn ${i}` });
      handles.push(handle);
      const roll = random();
      if (roll < 0.35) {
        // Barge in by voice after a random part of the reply.
        // (The user turn a previous barge-in left behind may interrupt this reply first.)
        await until(
          () => s.session.agentState === 'speaking' || handle.done(),
          5_000,
          `turn ${i} speaking`,
        );
        await sleep(random() * 900);
        s.vad!.startOfSpeech();
        s.vad!.speaking(500);
        await sleep(50);
        s.vad!.endOfSpeech(600);
        outcomes.push('vad');
      } else if (roll < 0.7) {
        // The app interrupts, possibly before the avatar even started.
        await sleep(random() * 900);
        await s.session.interrupt().await.catch(() => undefined);
        outcomes.push('interrupt');
      } else {
        outcomes.push('full');
      }
      // Under the framework's own 5 s interruption watchdog: a wedged output must fail here.
      const settled = await Promise.race([
        handle.waitForPlayout().then(() => 'done'),
        sleep(4_000).then(() => 'stuck'),
      ]);
      expect(settled, `turn ${i} (${outcomes[i]}, seed ${seed})`).toBe('done');
      await until(
        () => s.session.agentState !== 'speaking' && !s.sim.speaking,
        2_000,
        `turn ${i} (${outcomes[i]}, seed ${seed}) back from speaking`,
      );
    }
    await until(() => s.session.agentState === 'listening', 3_000, 'listening at the end');
    // Every interrupted turn committed what the avatar said, and no more.
    const messages = s.assistantMessages();
    for (const message of messages) {
      const text = message.textContent ?? '';
      expect(
        reply(Number(/number (\d+)/.exec(text)?.[1] ?? -1)).startsWith(text) || text === '',
      ).toBe(true);
      if (!message.interrupted) expect(text).toMatch(/closes it\.$/);
    }
    // Each turn that was not interrupted committed its whole reply; both kinds occurred.
    const uninterrupted = handles.filter((x) => !x.interrupted).length;
    expect(messages.filter((m) => !m.interrupted)).toHaveLength(uninterrupted);
    expect(uninterrupted).toBeGreaterThan(0);
    expect(uninterrupted).toBeLessThan(TURNS);
  }, 120_000);
});

describe('watchdog', () => {
  it('ends a segment whose lk.chat final never comes, and the agent listens again', async () => {
    const s = await h.start({ avatar: { playbackTimeoutMs: 1_000 } });
    s.sim.muted = true;
    const started = Date.now();
    const handle = s.session.say('Nobody will hear this. Nor this.');
    await handle.waitForPlayout();
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(900);
    // Its own 1 s, not the default 10 s (the rest is margin for a busy machine).
    expect(elapsed).toBeLessThan(7_000);
    expect(s.session.agentState).toBe('listening');
    // The avatar was told to stop, so it does not talk over the next turn.
    await until(() => s.sim.log.some((e) => e.event === 'interrupt'), 2_000, 'an interrupt');
    s.sim.muted = false;
    await s.session.say('Back on air.').waitForPlayout();
    expect(s.sim.finals().at(-1)).toBe('Back on air.');
  });
});
