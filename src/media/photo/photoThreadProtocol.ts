// SPDX-License-Identifier: GPL-3.0-or-later
import type { SharedAvatarAtlas } from '../render/index.js';
import type { FoundFace } from './findFace.js';
import type { Point } from './landmarks.js';

/** Messages between the photo thread pool and its thread (structured-cloneable). */
export type PhotoTask =
  | { kind: 'detect'; rgb: Uint8Array; width: number; height: number }
  | {
      kind: 'build';
      canvas: Uint8Array;
      landmarks: Point[];
      atlasId: string;
      photoScale: number;
    };

export interface PhotoBuildResult {
  /** The atlas packed in shared memory (posted without a copy). */
  atlas: SharedAvatarAtlas;
  /** The neutral frame, RGB. */
  neutral: Uint8Array;
  /** The frame the dark's gain was aimed on (PhotoAtlasBuild's `aimFrame`), I420. */
  aimFrame?: Uint8Array;
  timings: Record<string, number>;
}

export type PhotoTaskResult = FoundFace[] | PhotoBuildResult;

export type PhotoThreadReply =
  { id: number; result: PhotoTaskResult } | { id: number; error: { message: string } };
