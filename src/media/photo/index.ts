// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Photo avatars: a portrait becomes an atlas of the standard shape (see `buildPhotoAvatar`),
 * which the same renderer shows as it shows the catalogue faces.
 */
export {
  buildPhotoAvatar,
  decodePhotoBuild,
  photoBuildFraming,
  PHOTO_BUILD_FORMAT,
  type PhotoBuildOptions,
  type PhotoBuildOutput,
  type PhotoBuildStage,
} from './photoBuild.js';
export { PhotoError, type PhotoErrorCode } from './photoError.js';
export { DEFAULT_FACE_LIMITS, type FaceLimits } from './findFace.js';
export {
  DEFAULT_PHOTO_LIMITS,
  PHOTO_CONTENT_TYPES,
  sniffPhotoFormat,
  type PhotoFormat,
  type PhotoLimits,
} from './photoImage.js';
export {
  PhotoThreadPool,
  photoThreadPool,
  type PhotoThreadPoolOptions,
} from './photoThreadPool.js';
export { PhotoAtlasCache } from './photoAtlasCache.js';
export {
  fittingStockVoice,
  UNSURE_VOICE_ID,
  voiceRegister,
  type FittingVoice,
  type VoiceRegister,
} from './photoVoice.js';
