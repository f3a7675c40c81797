// SPDX-License-Identifier: Apache-2.0
/**
 * @visage-avatar/web: draws a Visage avatar of a `client` mode session in the viewer's browser,
 * from its `visage.face` stream and its atlas, in step with the voice the page plays.
 */
export { VisageAvatar, type VisageAvatarOptions, type DrawnFace } from './visageAvatar.js';
export {
  decodeAtlas,
  type Atlas,
  type DecodeAtlasOptions,
  type Rect,
  type SpriteSet,
} from './atlas.js';
export {
  FaceComposer,
  framePartsOf,
  i420ToRgba,
  type FacePose,
  type FrameParts,
} from './faceComposer.js';
export { drawnPose } from './drawnPose.js';
export { fetchAtlas, MAX_ATLAS_BYTES } from './fetchAtlas.js';
export { PlayoutClock, ARRIVAL_DELAY_MS, type ClockSource } from './playoutClock.js';
