// SPDX-License-Identifier: GPL-3.0-or-later
// What a viewer sees of an avatar's eyes: every received frame's eyes and brows, classified
// against the atlas's own looks (gaze with its brows, lids, how high the head is).
import { Room, RoomEvent, TrackKind, VideoStream, type RemoteTrack } from '@livekit/rtc-node';
import {
  BREATH_LEVELS,
  GAZES,
  renderStill,
  SWAY_OFFSETS,
  type AvatarAtlas,
  type GazeName,
  type Rect,
} from '../../../src/media/render/index.js';

/** A look: the gaze drawn (brows included), or `closed` for shut lids (a blink). */
export type Look = GazeName | 'closed';

export interface SeenFrame {
  /** When the viewer got the frame, ms on its own clock. */
  atMs: number;
  /**
   * The frame's own time (its render timestamp), ms: frames that a busy machine delivers in a
   * bunch are still as far apart here as they were made.
   */
  mediaMs: number;
  look: Look;
  /** The head's breathing lift, whole px (0..BREATH_LEVELS-1). */
  lift: number;
}

interface Template {
  look: Look;
  lift: number;
  crop: Uint8Array;
}

/** The eyes and brows of an atlas, with room for the head's sway and breathing around them. */
function eyesAndBrows(atlas: AvatarAtlas): Rect {
  const eyes = atlas.eyes.rect;
  return {
    x: eyes.x - 4,
    y: eyes.y - BREATH_LEVELS - 2,
    width: eyes.width + 8,
    height: eyes.height + BREATH_LEVELS + 4,
  };
}

function crop(luma: Uint8Array, stride: number, region: Rect): Uint8Array {
  const out = new Uint8Array(region.width * region.height);
  for (let y = 0; y < region.height; y++) {
    const row = (region.y + y) * stride + region.x;
    out.set(luma.subarray(row, row + region.width), y * region.width);
  }
  return out;
}

/**
 * The avatar's eyes as the atlas draws them: every gaze with open lids, and the looks the
 * conversation uses with lowered and shut lids (nod, thinking, blinks), at every breathing lift
 * and sway.
 */
function templates(atlas: AvatarAtlas, region: Rect): Template[] {
  const looks: { gaze: GazeName; lid: number }[] = GAZES.map(({ name }) => ({
    gaze: name,
    lid: 0,
  }));
  for (const { name } of GAZES) {
    if (name === 'down') continue; // the parked look, lids already half down
    for (const lid of [0.4, 1]) looks.push({ gaze: name, lid });
  }
  const out: Template[] = [];
  for (const { gaze, lid } of looks) {
    for (let lift = 0; lift < BREATH_LEVELS; lift++) {
      for (const sway of SWAY_OFFSETS) {
        const still = renderStill(atlas, { gaze, lid, breath: lift, sway });
        out.push({ look: lid === 1 ? 'closed' : gaze, lift, crop: crop(still, 512, region) });
      }
    }
  }
  return out;
}

/** The nearest template: which look and how high the head is in a frame's eyes. */
function classify(eyes: Uint8Array, all: Template[]): { look: Look; lift: number } {
  let best = all[0]!;
  let bestSad = Infinity;
  for (const t of all) {
    let sad = 0;
    for (let i = 0; i < eyes.length && sad < bestSad; i++) sad += Math.abs(eyes[i]! - t.crop[i]!);
    if (sad < bestSad) {
      bestSad = sad;
      best = t;
    }
  }
  return { look: best.look, lift: best.lift };
}

/** A participant that keeps the eyes of every avatar frame it receives, and classifies them. */
export class EyeViewer {
  readonly room = new Room();
  private readonly t0 = performance.now();
  private readonly frames: { atMs: number; mediaMs: number; eyes: Uint8Array }[] = [];
  private readonly region: Rect;

  constructor(private readonly atlas: AvatarAtlas) {
    this.region = eyesAndBrows(atlas);
  }

  now(): number {
    return performance.now() - this.t0;
  }

  get received(): number {
    return this.frames.length;
  }

  async join(url: string, token: string): Promise<void> {
    this.room.on(RoomEvent.TrackSubscribed, (track: RemoteTrack) => {
      if (track.kind !== TrackKind.KIND_VIDEO) return;
      void (async () => {
        for await (const ev of new VideoStream(track)) {
          const f = ev.frame.type === 5 ? ev.frame : ev.frame.convert(5);
          if (f.width !== 512 || f.height !== 512) continue;
          this.frames.push({
            atMs: this.now(),
            mediaMs: Number(ev.timestampUs) / 1000,
            eyes: crop(f.data, 512, this.region),
          });
        }
      })().catch(() => undefined); // the stream errors when the room disconnects
    });
    await this.room.connect(url, token, { autoSubscribe: true, dynacast: false });
  }

  /** Every frame so far, classified (about a millisecond each). */
  seen(): SeenFrame[] {
    const all = templates(this.atlas, this.region);
    return this.frames.map((f) => ({ atMs: f.atMs, mediaMs: f.mediaMs, ...classify(f.eyes, all) }));
  }

  leave(): Promise<void> {
    return this.room.disconnect();
  }
}

export function between(frames: SeenFrame[], from: number, to: number): SeenFrame[] {
  return frames.filter((f) => f.atMs >= from && f.atMs < to);
}

/** The share of `frames` showing one of `looks`. */
export function share(frames: SeenFrame[], looks: readonly Look[]): number {
  return frames.filter((f) => looks.includes(f.look)).length / Math.max(1, frames.length);
}

/**
 * The least `fastestDrop` that is a nod. Breathing lifts the head by 1.5 (1 - cos) px over 4.2 s,
 * so within `DROP_WINDOW_MS` (400 ms) it moves at most 3 sin(pi 0.4 / 4.2) = 0.88 px: whole-pixel
 * lifts a breath apart differ by 1 at most (measured without the nod: 0 or 1 px). The nod goes up
 * to the top of the range and down to its bottom, 3 px in 160 ms, and stays within half a pixel of
 * the bottom for about 150 ms when the breath was half-way. Its top is above 2.5 px for only about
 * 65 ms, so a loaded machine's frames (18 a second, gaps up to 180 ms, measured beside two CPU
 * hogs) may miss it: the drop seen is then from the lift before the nod to its bottom, 2 px.
 */
export const NOD_DROP_PX = 2;

/** The span `fastestDrop` looks within: a nod fits in it, a breath cannot drop 1 px in it. */
export const DROP_WINDOW_MS = 400;

/**
 * The largest drop of the head within `ms`: the nod's signature (breathing is far slower). Frames
 * with shut lids are left out: half-way through a blink the nearest look may sit a pixel off.
 */
export function fastestDrop(all: SeenFrame[], ms = DROP_WINDOW_MS): number {
  const frames = all.filter((f) => f.look !== 'closed');
  let drop = 0;
  for (let i = 0; i < frames.length; i++) {
    for (let j = i + 1; j < frames.length && frames[j]!.mediaMs - frames[i]!.mediaMs <= ms; j++) {
      drop = Math.max(drop, frames[i]!.lift - frames[j]!.lift);
    }
  }
  return drop;
}

/** One line: how many frames, of which looks, and the fastest drop. */
export function describeLooks(frames: SeenFrame[]): string {
  const counts: Record<string, number> = {};
  for (const f of frames) counts[f.look] = (counts[f.look] ?? 0) + 1;
  return `${frames.length} frames ${JSON.stringify(counts)}, fastest drop ${fastestDrop(frames)} px`;
}
