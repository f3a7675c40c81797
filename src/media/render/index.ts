export {
  createFaceRenderer,
  prepareAvatar,
  RECOMMENDED_FPS,
  type FaceRenderer,
  type FaceRendererOptions,
  type FaceRenderInput,
} from './faceRenderer.js';
export { FRAME_HEIGHT, FRAME_WIDTH, type Rect } from './faceGeometry.js';
export { i420Size, type I420Image } from './i420.js';
export { measureMouthOpening } from './mouthOpening.js';
export { i420ToPng } from './pngSnapshot.js';
export { adoptSharedAtlas, shareAvatarAtlas, type SharedAvatarAtlas } from './sharedAtlas.js';
