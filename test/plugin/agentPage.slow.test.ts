// SPDX-License-Identifier: GPL-3.0-or-later
// The agent-worker example as a newcomer runs it: `agent.ts dev --offline` (no LLM, no key) and
// its own page (frontend.ts + page.html) in headless Chromium. The page joins a room, which
// dispatches the worker; the avatar joins on the agent's behalf, greets, and says back what is
// typed. The page's transcript is built from the agent's lk.transcription streams as LiveKit's
// components build it: it must grow word by word while the avatar speaks, not arrive whole.
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { OFFLINE_GREETING } from '../../examples/agent-worker/echoLlm.js';
import { startAgentFrontend } from '../../examples/agent-worker/frontend.js';
import type { PageServer } from '../../examples/shared/pageServer.js';
import { startMediaStack, type MediaStack } from '../media/room/mediaStack.js';
import { describeWebRtc } from '../support/network.js';
import { startAgentWorker, type AgentWorkerProcess } from './agentWorkerProcess.js';
import { launchChromium } from '../support/chromium.js';

interface PageLine {
  who: string;
  text: string;
  done: boolean;
}

const pageLines = (page: Page) =>
  page.evaluate(() => (window as unknown as { agentPage: { lines: PageLine[] } }).agentPage.lines);

describeWebRtc(
  'examples/agent-worker: --offline worker and its page in headless Chromium',
  (address) => {
    let stack: MediaStack;
    let worker: AgentWorkerProcess;
    let frontend: PageServer;
    let browser: Browser;

    beforeAll(async () => {
      stack = await startMediaStack(address);
      worker = startAgentWorker(
        {
          LIVEKIT_URL: stack.livekit.url,
          LIVEKIT_API_KEY: 'devkey',
          LIVEKIT_API_SECRET: stack.apiSecret,
          VISAGE_API_KEY: stack.visage.secret,
          VISAGE_API_URL: stack.visage.url,
          // No OPENAI_* at all: --offline needs none.
        },
        ['--offline'],
      );
      frontend = await startAgentFrontend({
        livekitUrl: stack.livekit.url,
        apiKey: 'devkey',
        apiSecret: stack.apiSecret,
        host: address,
        port: 0,
      });
      browser = await launchChromium({ secureOrigin: frontend.url });
    }, 90_000);

    afterAll(async () => {
      await browser?.close();
      await frontend?.close();
      await worker?.stop();
      await stack?.close();
    });

    it('shows the avatar, its words as it says them, and answers what the user types', async () => {
      await worker.registered();
      const page = await browser.newPage();
      await page.goto(frontend.url);
      await page.click('#start');
      await page
        .waitForFunction(
          () => {
            const v = document.querySelector('video')!;
            return v.readyState >= 2 && v.videoWidth === 512 && v.currentTime > 0.5;
          },
          undefined,
          { timeout: 60_000 },
        )
        .catch((err: unknown) => {
          throw new Error(`${String(err)}\n--- worker output ---\n${worker.output().slice(-4000)}`);
        });

      // The greeting appears word by word while the avatar says it (one line per sentence, each an
      // utterance with its own segment), then complete.
      const seen: string[] = [];
      const deadline = Date.now() + 60_000;
      for (;;) {
        const agent = (await pageLines(page)).filter((l) => l.who === 'Agent');
        const text = agent.map((l) => l.text.trim()).join(' ');
        if (seen.at(-1) !== text) seen.push(text);
        if (text === OFFLINE_GREETING && agent.every((l) => l.done)) break;
        if (Date.now() > deadline)
          throw new Error(`no complete greeting; saw ${JSON.stringify(seen)}`);
        await page.waitForTimeout(50);
      }
      const partial = seen.filter((t) => t.length > 0 && t.length < OFFLINE_GREETING.length);
      expect(partial.length).toBeGreaterThanOrEqual(3);
      for (const text of partial) expect(OFFLINE_GREETING.startsWith(text)).toBe(true);

      // The user types; the echo agent answers through the avatar.
      await page.fill('#text', 'Nice to meet you');
      await page.click('#chat button');
      await page.waitForFunction(
        () =>
          (window as unknown as { agentPage: { lines: PageLine[] } }).agentPage.lines.some(
            (l) => l.who === 'Agent' && l.done && l.text.trim() === 'You said: Nice to meet you',
          ),
        undefined,
        { timeout: 60_000 },
      );
      const lines = await pageLines(page);
      expect(lines.map((l) => `${l.who}: ${l.text.trim()}`)).toEqual([
        'Agent: Hello! I am running offline, without a language model.',
        'Agent: Type something and I will say it back.',
        'You: Nice to meet you',
        'Agent: You said: Nice to meet you',
      ]);
      // The page plays the avatar's audio.
      expect(await page.locator('audio').count()).toBeGreaterThanOrEqual(1);
      const shot = join(mkdtempSync(join(tmpdir(), 'visage-agent-page-')), 'page.png');
      await page.screenshot({ path: shot });
      expect(statSync(shot).size).toBeGreaterThan(10_000);
      console.log(`agent page screenshot: ${shot}`);
      await page.close();
    }, 240_000);
  },
);
