// SPDX-License-Identifier: GPL-3.0-or-later
// The browser package's examples as they are shipped, in headless Chromium against a real
// `client` mode session (the embedded LiveKit server, a Visage server, a real avatar):
// examples/web-html (one page, no bundler: the package's one-file build and livekit-client's module from the page's origin,
// served by its serve.ts as its README runs it) and examples/web-react (the component and its app,
// bundled and served by esbuild as its README does). One is given the session's URL and token in
// its query, the other in its form; the canvas shows a face, and its mouth, measured on the
// canvas's pixels, opens while the voice the page plays is loud and shuts when it is over; when
// the session ends, the page says it left.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { context, type BuildContext } from 'esbuild';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { decodeAtlasFile } from '../../src/media/render/atlasFile.js';
import { launchChromium } from '../support/chromium.js';
import { startMediaStack, type CreatedSession, type MediaStack } from '../media/room/mediaStack.js';
import { describeWebRtc } from '../support/network.js';
import {
  describeDrawnSpeech,
  drawnSpeechProblem,
  measureDrawnSpeech,
  mouthShut,
} from './canvasProbe.js';

const AVATAR = AVATAR_CATALOGUE[0]!;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** examples/web-html/serve.ts as a process, as the README runs it; answers the URL it printed. */
async function serveHtmlExample(): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/web-html/serve.ts'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(async () => child.kill('SIGKILL'));
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const until = Date.now() + 60_000;
  for (;;) {
    const url = /web-html example on (http:\/\/\S+)/.exec(output)?.[1];
    if (url) return url;
    if (Date.now() > until || child.exitCode !== null) {
      throw new Error(`the example's server did not start: ${output}`);
    }
    await sleep(50);
  }
}

/**
 * examples/web-react bundled and served by esbuild, as its README's command does (development
 * React: StrictMode mounts the component twice, as while a developer works on it).
 */
async function serveReactExample(): Promise<string> {
  const ctx: BuildContext = await context({
    entryPoints: ['examples/web-react/main.tsx'],
    bundle: true,
    format: 'esm',
    jsx: 'automatic',
    outdir: 'examples/web-react/dist',
    logLevel: 'silent',
  });
  cleanups.push(() => ctx.dispose());
  const { port } = await ctx.serve({ servedir: 'examples/web-react', host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${port}/`;
}

/** How a page is given the session: the page's query, or its form (both examples have both). */
type Join = (page: Page, pageUrl: string, created: CreatedSession) => Promise<void>;

const byQuery: Join = async (page, pageUrl, created) => {
  const query = new URLSearchParams({
    url: created.livekit_url,
    token: created.participant_token,
    atlas: created.atlas_url!,
  });
  await page.goto(`${pageUrl}?${query}`);
};

const byForm: Join = async (page, pageUrl, created) => {
  await page.goto(pageUrl);
  await page.fill('input[name=url]', created.livekit_url);
  await page.fill('input[name=token]', created.participant_token);
  await page.fill('input[name=atlas]', created.atlas_url!);
  await page.click('button:text("Join")');
};

describeWebRtc(
  'the browser package’s examples draw a client mode session in Chromium',
  (address) => {
    let stack: MediaStack;
    let browser: Browser;
    let mouthRegion: DOMRectInit;

    beforeAll(async () => {
      stack = await startMediaStack(address);
      browser = await launchChromium();
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await stack?.close();
    });

    /**
     * Opens `pageUrl` for a new `client` session of the stock avatar (given to it by `open`),
     * waits for the page to say the avatar is drawn, has the avatar say a sentence and measures
     * the mouth drawn on the canvas. Answers the page (to look at further) and what loaded.
     */
    async function drawnBy(
      pageUrl: string,
      open: Join,
    ): Promise<{ page: Page; scripts: string[] }> {
      const created = await stack.create(AVATAR.avatarId, { mode: 'client' });
      cleanups.push(() => stack.visage.call('DELETE', `/v1/sessions/${created.session_id}`));
      if (!mouthRegion) {
        const atlas = new Uint8Array(await (await fetch(created.atlas_url!)).arrayBuffer());
        mouthRegion = decodeAtlasFile(atlas, {}).shared.layout.mouthRegion;
      }
      const page = await browser.newPage();
      cleanups.push(() => page.close());
      const logs: string[] = [];
      const scripts: string[] = [];
      page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
      page.on('pageerror', (err) => logs.push(`error: ${err.message}`));
      page.on('request', (r) => {
        if (r.resourceType() === 'script') scripts.push(r.url());
      });
      await open(page, pageUrl, created);
      await page
        .waitForFunction(
          () =>
            document.querySelector('#status')?.textContent === 'The avatar is drawn in this page.',
          undefined,
          { timeout: 60_000 },
        )
        .catch(async (err: unknown) => {
          const said = await page.textContent('#status').catch(() => null);
          throw new Error(`${String(err)}; the page said: ${said}; it logged:\n${logs.join('\n')}`);
        });
      const speech = await measureDrawnSpeech(page, 'canvas', mouthRegion, async () => {
        const res = await stack.visage.call('POST', `/v1/sessions/${created.session_id}/speak`, {
          json: {
            text: 'Maybe my mother bought a big blue map, but please pay me back by Monday.',
          },
        });
        expect(res.status).toBe(202);
      });
      console.log(`${pageUrl}: ${describeDrawnSpeech(speech)}`);
      // A face drawn, and moving with the voice; shut once it is over.
      expect(drawnSpeechProblem(speech), describeDrawnSpeech(speech)).toBeUndefined();
      await mouthShut(page, speech.closed);
      // The avatar's size, and no video: the face is the canvas's.
      expect(await page.$eval('canvas', (c) => [c.width, c.height])).toEqual([512, 512]);
      expect(await page.$$('video')).toHaveLength(0);
      // A picture to look at: the page as a viewer sees it.
      const shot = join(mkdtempSync(join(tmpdir(), 'visage-web-example-')), 'page.png');
      await page.screenshot({ path: shot, fullPage: true });
      console.log(`screenshot: ${shot}`);
      // The session ends (its room is deleted): the page says it left.
      const ended = await stack.visage.call('DELETE', `/v1/sessions/${created.session_id}`);
      expect(ended.ok).toBe(true);
      await page.waitForFunction(
        () => document.querySelector('#status')?.textContent?.startsWith('Left the room') === true,
        undefined,
        { timeout: 30_000 },
      );
      return { page, scripts };
    }

    it('examples/web-html: the page, with the built packages from its own origin, draws the avatar speaking', async () => {
      const url = await serveHtmlExample();
      const { scripts } = await drawnBy(url, byQuery);
      console.log(`web-html: ${scripts.length} scripts loaded`);
      // No bundler: livekit-client's module and the package's one-file build (the face
      // stream's reader inside it), each from the page's origin.
      const paths = scripts.map((s) => {
        expect(new URL(s).origin).toBe(new URL(url).origin);
        return new URL(s).pathname;
      });
      expect(new Set(paths)).toEqual(
        new Set([
          '/node_modules/@visage-avatar/web/dist/browser.js',
          '/node_modules/livekit-client/dist/livekit-client.esm.mjs',
        ]),
      );
    }, 180_000);

    it('examples/web-react: the component in its app, joined through its form, draws the avatar speaking', async () => {
      const url = await serveReactExample();
      const { page } = await drawnBy(url, byForm);
      // The app's one audio element plays the voice (StrictMode's second mount left no other).
      expect(await page.$$('audio')).toHaveLength(1);
    }, 180_000);
  },
);
