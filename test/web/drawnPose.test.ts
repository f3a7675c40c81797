// SPDX-License-Identifier: GPL-3.0-or-later
// What @visage-avatar/web draws at an instant of the sender's clock: the face line in force, its
// breathing and lids eased towards the next, and a mouth shut at once by a cut.
import { describe, expect, it } from 'vitest';
import { FaceTimeline, type FaceFrame } from '@visage-avatar/client/face';
import { drawnPose } from '../../packages/web/src/index.js';

const line = (t: number, over: Partial<FaceFrame> = {}): FaceFrame => ({
  type: 'face',
  t,
  viseme: 'AA',
  open: 0.8,
  oculus: 'aa',
  lid: 0,
  gaze: 'center',
  sway: 0,
  lift: 1,
  look: 'speaking',
  ...over,
});

describe('drawnPose', () => {
  it('draws the line in force, breathing and lids eased towards the next line', () => {
    const timeline = new FaceTimeline();
    timeline.push(line(1000, { lift: 1, lid: 0 }));
    timeline.push(line(1040, { lift: 2, lid: 1, open: 0.2 }));
    expect(drawnPose(timeline, 999, -Infinity)).toBeUndefined();
    const between = drawnPose(timeline, 1010, -Infinity)!;
    expect(between.open).toBe(0.8); // the mouth is the line's, not a blend of two shapes
    expect(between.lift).toBeCloseTo(1.25);
    expect(between.lid).toBeCloseTo(0.25);
    expect(drawnPose(timeline, 1040, -Infinity)!.open).toBe(0.2);
    // Lines far apart (the stream paused): no easing across the gap.
    timeline.push(line(2000, { lift: 3 }));
    expect(drawnPose(timeline, 1500, -Infinity)!.lift).toBe(2);
  });

  it('shuts the mouth from a cut on, before corrected lines arrive', () => {
    const timeline = new FaceTimeline();
    timeline.push(line(1000));
    timeline.push(line(1040));
    expect(drawnPose(timeline, 1050, 1060)!.open).toBe(0.8); // before the cut
    const after = drawnPose(timeline, 1060, 1060)!;
    expect(after).toMatchObject({ viseme: 'rest', open: 0 });
    // A line sent after the cut, for a time after it, is drawn as it says.
    timeline.push(line(1080, { open: 0.5 }));
    expect(drawnPose(timeline, 1090, 1060)!.open).toBe(0.5);
  });
});
