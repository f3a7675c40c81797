// `visage dev`'s playground as a developer uses it: `npx visage dev` (the build, whose page script
// is the bundle in dist/), an agents-js worker with a Visage avatar registered with its LiveKit
// server (examples/agent-worker/agent.ts --offline: the echo agent), and the page in headless
// Chromium with a fake microphone. Joining dispatches the worker; the avatar's video plays, its
// greeting appears as it says it, the agent's state shows, and a typed message is answered.
import { chromium, type Page } from 'playwright-core';
import { afterEach, beforeAll, expect, inject, it } from 'vitest';
import { OFFLINE_GREETING } from '../../examples/agent-worker/echoLlm.js';
import { ensureChromium } from '../devserver/browser/chromium.js';
import { startAgentWorker } from '../plugin/agentWorkerProcess.js';
import { copyTemplate } from '../server/templateDatabase.js';
import { describeWebRtc } from '../support/network.js';
import { buildCli, startCli } from './cliProcess.js';

interface PlaygroundLine {
  who: string;
  text: string;
  done: boolean;
}
interface Playground {
  lines: PlaygroundLine[];
  states: string[];
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

const playgroundOf = (page: Page) =>
  page.evaluate(() => {
    const { lines, states } = (window as unknown as { playground: Playground }).playground;
    return { lines: lines.map((l) => ({ ...l })), states: [...states] };
  });

/** Frames the video element decoded, and whether the latest one has a picture (not one colour). */
const videoFrames = (page: Page) =>
  page.evaluate(() => {
    const v = document.querySelector('video')!;
    const decoded = v.getVideoPlaybackQuality().totalVideoFrames;
    if (v.readyState < 2 || v.videoWidth === 0) return { decoded, width: 0, distinct: 0 };
    const canvas = document.createElement('canvas');
    canvas.width = 64;
    canvas.height = 64;
    const g = canvas.getContext('2d')!;
    g.drawImage(v, 0, 0, 64, 64);
    const pixels = g.getImageData(0, 0, 64, 64).data;
    const colours = new Set<number>();
    for (let i = 0; i < pixels.length; i += 4) {
      colours.add((pixels[i]! >> 4) * 256 + (pixels[i + 1]! >> 4) * 16 + (pixels[i + 2]! >> 4));
    }
    return { decoded, width: v.videoWidth, distinct: colours.size };
  });

describeWebRtc('the playground of `npx visage dev`, with an agent worker', () => {
  beforeAll(() => buildCli(), 180_000);

  it('shows the avatar, the greeting as it is said and the state, and answers typing', async () => {
    const dir = copyTemplate(inject('dbTemplate'));
    const keys = { key: 'APIplayground', secret: 'playground-test-secret-0123456789abcdef' };
    const dev = startCli(
      [
        'dev',
        '--port',
        '0',
        '--livekit-port',
        '0',
        '--data-dir',
        dir,
        '--livekit-keys',
        `${keys.key}:${keys.secret}`,
      ],
      { built: true },
    );
    cleanups.push(async () => dev.child.kill('SIGKILL'));
    const out = await dev.waitFor(/Press Ctrl-C/, 180_000);
    const apiUrl = /API:\s+(http:\/\/\S+)/.exec(out)![1]!;
    const livekitUrl = /LiveKit:\s+(ws:\/\/\S+)/.exec(out)![1]!;
    const secret = /sk_[0-9A-Za-z]{40}/.exec(out)![0];

    const worker = startAgentWorker(
      {
        LIVEKIT_URL: livekitUrl,
        LIVEKIT_API_KEY: keys.key,
        LIVEKIT_API_SECRET: keys.secret,
        VISAGE_API_KEY: secret,
        VISAGE_API_URL: apiUrl,
      },
      ['--offline'],
    );
    cleanups.push(() => worker.stop());
    await worker.registered();

    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? ensureChromium(),
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--autoplay-policy=no-user-gesture-required',
        '--use-fake-device-for-media-stream',
        '--use-fake-ui-for-media-stream',
      ],
    });
    cleanups.push(() => browser.close());
    const page = await browser.newPage();
    // What the page's SDK logged (its peer connections, data channels), for a failure's message.
    const consoleLines: string[] = [];
    page.on('console', (m) => {
      consoleLines.push(`${m.type()}: ${m.text()}`);
      if (consoleLines.length > 200) consoleLines.shift();
    });
    // The page holds no secret: neither the LiveKit secret nor the Visage key is anywhere in it.
    const served: string[] = [];
    page.on('response', (r) => {
      if (r.url().startsWith(apiUrl)) served.push(r.url());
      void r
        .text()
        .then((t) => {
          if (t.includes(keys.secret) || t.includes(secret)) served.push(`SECRET in ${r.url()}`);
        })
        .catch(() => undefined);
    });
    await page.goto(`${apiUrl}/playground`);
    await page.click('#start');

    // The avatar's video plays: frames decode, and they are a picture.
    const failure = async (what: string) =>
      new Error(
        `${what}; the page said: ${await page.textContent('#status')}\n` +
          `lines: ${JSON.stringify((await playgroundOf(page)).lines)}\n` +
          `--- worker output ---\n${worker.output().slice(-4000)}\n` +
          `--- visage dev output ---\n${dev.output().slice(-3000)}\n` +
          `--- page console ---\n${consoleLines.join('\n').slice(-3000)}`,
      );
    await page
      .waitForFunction(
        () => {
          const v = document.querySelector('video')!;
          return v.readyState >= 2 && v.getVideoPlaybackQuality().totalVideoFrames >= 25;
        },
        undefined,
        { timeout: 90_000 },
      )
      .catch(async () => {
        throw await failure('the avatar video did not play');
      });
    const first = await videoFrames(page);
    expect(first.width).toBe(512);
    expect(first.distinct).toBeGreaterThan(20);

    // The greeting appears as the avatar says it, then whole.
    const seen: string[] = [];
    const deadline = Date.now() + 90_000;
    for (;;) {
      const agent = (await playgroundOf(page)).lines.filter((l) => l.who === 'Agent');
      const text = agent.map((l) => l.text.trim()).join(' ');
      if (seen.at(-1) !== text) seen.push(text);
      if (text === OFFLINE_GREETING && agent.every((l) => l.done)) break;
      if (Date.now() > deadline) throw await failure(`no whole greeting; saw ${seen.join(' | ')}`);
      await page.waitForTimeout(50);
    }
    expect(seen.some((t) => t.length > 0 && t.length < OFFLINE_GREETING.length)).toBe(true);
    await expect
      .poll(() => page.textContent('#transcript'), { timeout: 10_000 })
      .toContain('Type something and I will say it back.');

    // The agent's state, from its lk.agent.state attribute, on the page.
    await expect
      .poll(async () => (await playgroundOf(page)).states.at(-1), { timeout: 30_000 })
      .toBe('listening');
    expect(await page.textContent('#state')).toBe('listening');

    // The microphone: the page publishes it (the fake device).
    await page.click('#mic');
    await page.waitForFunction(
      () => document.querySelector<HTMLElement>('#mic')!.dataset.on === 'true',
      undefined,
      { timeout: 30_000 },
    );
    // Typing: the echo agent answers, and the avatar says it.
    const framesBefore = (await videoFrames(page)).decoded;
    await page.fill('#text', 'Nice to meet you');
    await page.press('#text', 'Enter');
    await page
      .waitForFunction(
        () =>
          (window as unknown as { playground: Playground }).playground.lines.some(
            (l) => l.who === 'Agent' && l.done && l.text.trim() === 'You said: Nice to meet you',
          ),
        undefined,
        { timeout: 90_000 },
      )
      .catch(async () => {
        throw await failure('no answer to the typed message');
      });
    const { lines, states } = await playgroundOf(page);
    expect(lines.map((l) => `${l.who}: ${l.text.trim()}`).slice(-2)).toEqual([
      'You: Nice to meet you',
      'Agent: You said: Nice to meet you',
    ]);
    expect(states).toContain('speaking');
    expect((await videoFrames(page)).decoded).toBeGreaterThan(framesBefore);
    expect(await page.locator('audio').count()).toBeGreaterThanOrEqual(1);
    expect(served.filter((s) => s.startsWith('SECRET'))).toEqual([]);
    expect(served).toContain(`${apiUrl}/playground/token`);

    dev.child.kill('SIGTERM');
    expect((await dev.done).code).toBe(0);
  }, 500_000);
});
