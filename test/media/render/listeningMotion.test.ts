// SPDX-License-Identifier: GPL-3.0-or-later
import { beforeAll, describe, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import { IdleMotion, type IdleState } from '../../../src/media/render/idleMotion.js';
import {
  ListeningMotion,
  NOD_MS,
  QUESTION_BROW_MS,
  type ConversationCue,
} from '../../../src/media/render/listeningMotion.js';
import {
  BREATH_LEVELS,
  createFaceRenderer,
  GAZES,
  type GazeName,
} from '../../../src/media/render/index.js';
import { loadCatalogueAtlases } from '../../support/catalogueAtlases.js';

const FRAME_MS = 40;

// The atlas as drawn once for the run (catalogueAtlases.ts).
beforeAll(() => loadCatalogueAtlases([AVATAR_CATALOGUE[0]!.avatarId]), 120_000);
const gazeName = (i: number): GazeName => GAZES[i]!.name;

/** Idle life with the conversation on top, frame by frame on a clock the test drives. */
function face(seed = 7) {
  const idle = new IdleMotion(seed);
  const listening = new ListeningMotion(seed);
  let t = 0;
  const cue = { agentState: undefined as string | undefined, questions: 0, turnsEnded: 0 };
  return {
    cue,
    get t() {
      return t;
    },
    /** Frames for `ms`, each the idle state and what the conversation made of it. */
    run(ms: number, given: ConversationCue | undefined = cue) {
      const frames: { t: number; idle: IdleState; out: IdleState }[] = [];
      for (const end = t + ms; t < end; t += FRAME_MS) {
        const base = idle.update(t, false, false);
        const idleCopy = { ...base };
        const out = { ...listening.apply(base, t, false, given) };
        frames.push({ t, idle: idleCopy, out });
      }
      return frames;
    },
  };
}

/** Starts of blinks (lid crossing 0.9 upwards). */
function blinks(frames: { out: IdleState }[]): number {
  let n = 0;
  for (let i = 1; i < frames.length; i++) {
    if (frames[i]!.out.lid >= 0.9 && frames[i - 1]!.out.lid < 0.9) n++;
  }
  return n;
}

describe('listening motion: an agent avatar in conversation', () => {
  it('passes idle life through unchanged without a cue, while speaking, parked or initializing', () => {
    const idle: IdleState = { breath: 1.3, sway: 2, lid: 0.1, gaze: 4 };
    const m = new ListeningMotion(1);
    expect(m.apply(idle, 0, false, undefined)).toBe(idle);
    expect(m.apply(idle, 40, false, { agentState: 'speaking', questions: 0, turnsEnded: 0 })).toBe(
      idle,
    );
    expect(
      m.apply(idle, 80, false, { agentState: 'initializing', questions: 0, turnsEnded: 0 }),
    ).toBe(idle);
    expect(m.apply(idle, 120, true, { agentState: 'listening', questions: 0, turnsEnded: 0 })).toBe(
      idle,
    );
    expect(idle).toEqual({ breath: 1.3, sway: 2, lid: 0.1, gaze: 4 });
    expect(
      m.apply(idle, 160, false, { agentState: 'listening', questions: 0, turnsEnded: 0 }),
    ).not.toBe(idle);
  });

  it('listens with the eyes on the viewer, breathing as in idle life, no nod', () => {
    const f = face();
    f.run(2_000); // idle life first
    f.cue.agentState = 'listening';
    const frames = f.run(20_000);
    const gazes = new Set(frames.map((x) => gazeName(x.out.gaze)));
    expect([...gazes]).toEqual(['center']);
    // Idle life alone looks around in that time.
    expect(new Set(frames.map((x) => gazeName(x.idle.gaze))).size).toBeGreaterThan(1);
    for (const x of frames) expect(x.out.breath).toBe(x.idle.breath);
    expect(blinks(frames)).toBeGreaterThanOrEqual(4);
  });

  it('nods when the user has finished (listening -> thinking): up, down the whole breath range within 200 ms, back', () => {
    const f = face();
    f.cue.agentState = 'listening';
    f.run(3_000);
    f.cue.agentState = 'thinking';
    f.cue.turnsEnded++;
    const at = f.t;
    const frames = f.run(NOD_MS + 400);
    const nod = frames.filter((x) => x.t - at < NOD_MS);
    const top = nod.findIndex((x) => x.out.breath >= BREATH_LEVELS - 1 - 0.05);
    expect(top).toBeGreaterThanOrEqual(0);
    const bottom = nod.findIndex((x, i) => i > top && x.out.breath <= 0.05);
    expect(bottom).toBeGreaterThan(top);
    expect(nod[bottom]!.t - nod[top]!.t).toBeLessThanOrEqual(200);
    // The lids follow the head down; the eyes stay on the viewer through the nod.
    expect(nod[bottom]!.out.lid).toBeGreaterThanOrEqual(0.3);
    for (const x of nod) expect(gazeName(x.out.gaze)).toBe('center');
    // Then breathing goes on from where idle life is.
    for (const x of frames.filter((y) => y.t - at >= NOD_MS)) {
      expect(x.out.breath).toBe(x.idle.breath);
    }
  });

  it('nods on over the speaking face when the thinking was shorter than a frame', () => {
    const f = face();
    f.cue.agentState = 'listening';
    f.run(3_000);
    f.cue.agentState = 'speaking';
    f.cue.turnsEnded++;
    const at = f.t;
    const frames = f.run(NOD_MS + 400);
    const lifts = frames.filter((x) => x.t - at < NOD_MS).map((x) => x.out.breath);
    expect(Math.max(...lifts)).toBeGreaterThanOrEqual(BREATH_LEVELS - 1 - 0.05);
    expect(Math.min(...lifts)).toBeLessThanOrEqual(0.05);
    // The rest is the speaking face as idle life draws it.
    for (const x of frames) {
      expect(x.out.gaze).toBe(x.idle.gaze);
      if (x.t - at >= NOD_MS) expect(x.out).toEqual(x.idle);
    }
  });

  it('does not nod for a state change alone, nor for a turn counted before it was first seen', () => {
    const f = face();
    f.cue.turnsEnded = 3;
    f.cue.agentState = 'listening';
    f.run(2_000);
    f.cue.agentState = 'thinking';
    const frames = f.run(NOD_MS);
    for (const x of frames) expect(x.out.breath).toBe(x.idle.breath);
  });

  it('thinks visibly: eyes up-aside then aside, lids a little lowered, the head leaning after them, fewer blinks', () => {
    const listening = face(3);
    listening.cue.agentState = 'listening';
    const heard = listening.run(60_000);

    const f = face(3);
    f.cue.agentState = 'listening';
    f.run(1_000);
    f.cue.agentState = 'thinking';
    f.cue.turnsEnded++;
    const at = f.t;
    const frames = f.run(60_000).filter((x) => x.t - at >= NOD_MS);
    const gazes = frames.map((x) => gazeName(x.out.gaze));
    for (const g of gazes) expect(['left', 'right', 'left-raised', 'right-raised']).toContain(g);
    // Up-aside right after the nod, and both sides in a minute.
    expect(gazes[0]).toMatch(/-raised$/);
    expect(gazes.some((g) => g.startsWith('left'))).toBe(true);
    expect(gazes.some((g) => g.startsWith('right'))).toBe(true);
    for (const x of frames) {
      const side = gazeName(x.out.gaze).startsWith('left') ? 0 : 2;
      expect(x.out.sway).toBe(side);
    }
    const settled = frames.filter((x) => x.t - at > NOD_MS + 1_000);
    expect(Math.min(...settled.map((x) => x.out.lid))).toBeGreaterThanOrEqual(0.19);
    expect(blinks(frames)).toBeGreaterThan(3);
    expect(blinks(frames)).toBeLessThan(blinks(heard));
  });

  it("lifts the brows at the user's question, for a moment", () => {
    const f = face();
    f.cue.agentState = 'listening';
    f.run(2_000);
    f.cue.questions = 1;
    const at = f.t;
    const frames = f.run(QUESTION_BROW_MS + 1_000);
    for (const x of frames) {
      expect(gazeName(x.out.gaze)).toBe(x.t - at < QUESTION_BROW_MS ? 'center-raised' : 'center');
    }
  });

  it('a cue that already counts questions when first seen raises nothing', () => {
    const f = face();
    f.cue.agentState = 'listening';
    f.cue.questions = 4;
    const frames = f.run(2_000);
    expect(frames.every((x) => gazeName(x.out.gaze) === 'center')).toBe(true);
  });

  it('renders the same frames as idle life for a session whose agent speaks (or has no state)', () => {
    const id = AVATAR_CATALOGUE[0]!.avatarId;
    const plain = createFaceRenderer(id, { seed: 21 });
    const agent = createFaceRenderer(id, { seed: 21 });
    const listener = createFaceRenderer(id, { seed: 21 });
    let listeningDiffers = 0;
    for (let i = 0; i < 250; i++) {
      const input = {
        timeMs: i * FRAME_MS,
        mouth: { viseme: 'rest' as const, openness: 0 },
        parked: false,
      };
      const a = Buffer.from(plain.renderFrame(input));
      const state = i < 125 ? undefined : 'speaking';
      const b = Buffer.from(
        agent.renderFrame({
          ...input,
          conversation: { agentState: state, questions: 0, turnsEnded: 0 },
        }),
      );
      expect(b.equals(a)).toBe(true);
      const c = listener.renderFrame({
        ...input,
        conversation: { agentState: 'listening', questions: 0, turnsEnded: 0 },
      });
      if (!Buffer.from(c).equals(a)) listeningDiffers++;
    }
    expect(listeningDiffers).toBeGreaterThan(0);
  });
});
