// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The avatar face renderer: 512x512 I420 frames for rtc-node's `VideoSource`, pasted from a sprite
 * atlas drawn once per avatar (no drawing and no colour conversion per frame).
 *
 * Per session: `createFaceRenderer(avatarId)`, then every frame
 * `renderFrame({ timeMs, mouth, parked })` and hand the returned buffer to
 * `new VideoFrame(buf, 512, 512, VideoBufferType.I420)` / `captureFrame` before the next call
 * (the buffer is reused). `timeMs` drives the idle life and must advance in real time; `mouth`
 * comes from the lip-sync side at the audio playout position. At startup call `prepareAvatar`
 * for each avatar (about a second each; `prepareAvatarAsync` does it in small steps that leave
 * the event loop free). `prepareAvatarCached` keeps the atlas in a cache directory between runs.
 */
export {
  createAtlasFaceRenderer,
  createFaceRenderer,
  prepareAvatar,
  renderStill,
  type StillPose,
  prepareAvatarAsync,
  RECOMMENDED_FPS,
  type FaceRenderer,
  type FaceRendererOptions,
  type FaceRenderInput,
} from './faceRenderer.js';
export {
  EYE_RECT as EYE_REGION,
  FRAME_HEIGHT,
  FRAME_WIDTH,
  MOUTH_RECT as MOUTH_REGION,
  type Rect,
} from './faceGeometry.js';
export { NOD_MS, QUESTION_BROW_MS, type ConversationCue } from './listeningMotion.js';
export { FaceMotion, type FacePose } from './faceMotion.js';
export { i420Size, i420ToRgb, rgbToI420, type I420Image } from './i420.js';
export { measureMouthOpening } from './mouthOpening.js';
export { i420ToPng } from './pngSnapshot.js';
export {
  adoptSharedAtlas,
  packAtlas,
  shareAvatarAtlas,
  unpackAtlas,
  type SharedAvatarAtlas,
} from './sharedAtlas.js';
export {
  BREATH_LEVELS,
  GAZES,
  LID_LEVELS,
  MOUTH_LEVELS,
  SWAY_OFFSETS,
  avatarAtlasAsync,
  mouthSpriteIndex,
  poseBlend,
  type AvatarAtlas,
  type GazeName,
  type PoseBlend,
} from './spriteAtlas.js';
export { spriteSet, type SpriteSet } from './spriteSet.js';
export { mouthShape, type MouthShape } from './mouthShape.js';
export {
  decodeAtlasFile,
  encodeAtlasFile,
  isSpriteRect,
  readAtlasFileHeader,
} from './atlasFile.js';
export {
  atlasFileCached,
  cacheKey as atlasCacheKey,
  prepareAvatarCached,
  type CachedAtlasOutcome,
} from './atlasCache.js';
