// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Where things are on the 512x512 canvas, shared by all avatars. The eye and mouth sprite
 * rectangles are the only parts that change per frame; they must lie inside the head (the build
 * checks that they are fully opaque there), and they have even coordinates and sizes so that
 * their chroma planes line up with the frame's.
 */
export const FRAME_WIDTH = 512;
export const FRAME_HEIGHT = 512;

export const HEAD = { cx: 256, cy: 230, rx: 104, ryTop: 128, ryBottom: 128 } as const;
export const EYES = { y: 232, dx: 45, halfWidth: 24, openUp: 11, openDown: 8 } as const;
export const BROWS = { y: 203 } as const;
export const MOUTH = { cx: 256, cy: 310 } as const;

export interface Rect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** The same for every avatar (exported as EYE_REGION and MOUTH_REGION: no atlas needed). */
export const EYE_RECT: Rect = { x: 180, y: 186, width: 152, height: 76 };
export const MOUTH_RECT: Rect = { x: 206, y: 284, width: 100, height: 60 };
