// SPDX-License-Identifier: GPL-3.0-or-later
// `visage dev`'s playground in headless Chromium, as a developer opens it: fake microphone, the
// page's own script, and what a test reads of it (its transcript lines, the agent's states, the
// decoded video). Also what a failure needs to explain itself: the page's console, the URLs it
// was served, and its peer connections' video statistics.
import { type Browser, type Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.js';

export interface PlaygroundLine {
  who: string;
  text: string;
  done: boolean;
}
export interface Playground {
  lines: PlaygroundLine[];
  states: string[];
}

export interface OpenPlayground {
  browser: Browser;
  page: Page;
  /** URLs of `apiUrl` the page was served, and `SECRET in <url>` for any answer holding one. */
  served: string[];
  /** What the page and the SDK inside it logged, for a failure's message (last 200 lines). */
  console(): string;
  close(): Promise<void>;
}

/**
 * Opens `${apiUrl}/playground` and presses Start (joins a room, which dispatches the worker).
 * `secrets` are strings no answer to the page may hold.
 */
export async function openPlayground(apiUrl: string, secrets: string[]): Promise<OpenPlayground> {
  const browser = await launchChromium({ fakeDevices: true });
  const page = await browser.newPage();
  // Every peer connection the page makes, to read its video statistics in a failure's message.
  await page.addInitScript(() => {
    const Native = window.RTCPeerConnection;
    const made: RTCPeerConnection[] = [];
    (window as unknown as { peerConnections: RTCPeerConnection[] }).peerConnections = made;
    window.RTCPeerConnection = class extends Native {
      constructor(config?: RTCConfiguration) {
        super(config);
        made.push(this);
      }
    };
  });
  const consoleLines: string[] = [];
  page.on('console', (m) => {
    consoleLines.push(`${m.type()}: ${m.text()}`);
    if (consoleLines.length > 200) consoleLines.shift();
  });
  const served: string[] = [];
  page.on('response', (r) => {
    if (r.url().startsWith(apiUrl)) served.push(r.url());
    void r
      .text()
      .then((t) => {
        if (secrets.some((s) => t.includes(s))) served.push(`SECRET in ${r.url()}`);
      })
      .catch(() => undefined);
  });
  await page.goto(`${apiUrl}/playground`);
  await page.click('#start');
  return {
    browser,
    page,
    served,
    console: () => consoleLines.join('\n'),
    close: () => browser.close(),
  };
}

export const playgroundOf = (page: Page) =>
  page.evaluate(() => {
    const { lines, states } = (window as unknown as { playground: Playground }).playground;
    return { lines: lines.map((l) => ({ ...l })), states: [...states] };
  });

/** Frames the video element decoded, and whether the latest one has a picture (not one colour). */
export const videoFrames = (page: Page) =>
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

/** The page's received video statistics (packets, frames, key frames, losses, PLIs, freezes). */
export const receivedVideo = (page: Page) =>
  page
    .evaluate(async () => {
      const pcs = (window as unknown as { peerConnections?: RTCPeerConnection[] }).peerConnections;
      const out: string[] = [];
      for (const pc of pcs ?? []) {
        const report = await pc.getStats();
        report.forEach((s: Record<string, unknown>) => {
          if (s.type === 'inbound-rtp' && s.kind === 'video') out.push(JSON.stringify(s));
        });
        out.push(`pc ${pc.connectionState} ice ${pc.iceConnectionState}`);
      }
      return out.join('\n');
    })
    .catch((e: unknown) => `no statistics: ${String(e)}`);

/** The audio energy the page received (inbound audio's totalAudioEnergy, summed): 0 if silent. */
export const receivedAudioEnergy = (page: Page) =>
  page.evaluate(async () => {
    const pcs = (window as unknown as { peerConnections?: RTCPeerConnection[] }).peerConnections;
    let energy = 0;
    for (const pc of pcs ?? []) {
      (await pc.getStats()).forEach((s: Record<string, unknown>) => {
        if (s.type === 'inbound-rtp' && s.kind === 'audio')
          energy += Number(s.totalAudioEnergy ?? 0);
      });
    }
    return energy;
  });

/** Waits until the avatar's video plays: `frames` decoded, the element ready. */
export const videoPlaying = (page: Page, frames: number, timeout: number) =>
  page.waitForFunction(
    (n) => {
      const v = document.querySelector('video')!;
      return v.readyState >= 2 && v.getVideoPlaybackQuality().totalVideoFrames >= n;
    },
    frames,
    { timeout },
  );

/**
 * Waits until the agent's lines on the page read `text`, each of them done; answers the agent's
 * text each time it changed (to see that it appeared as it was said). Throws `onTimeout()`.
 */
export async function agentSays(
  page: Page,
  text: string,
  timeoutMs: number,
  onTimeout: (seen: string[]) => Promise<Error>,
): Promise<string[]> {
  const seen: string[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const agent = (await playgroundOf(page)).lines.filter((l) => l.who === 'Agent');
    const said = agent.map((l) => l.text.trim()).join(' ');
    if (seen.at(-1) !== said) seen.push(said);
    if (said === text && agent.every((l) => l.done)) return seen;
    if (Date.now() > deadline) throw await onTimeout(seen);
    await page.waitForTimeout(50);
  }
}
