// SPDX-License-Identifier: GPL-3.0-or-later
import {
  decodeAtlasFile,
  encodeAtlasFile,
  readAtlasFileHeader,
  type SharedAvatarAtlas,
} from '../render/index.js';
import { CANVAS_MARGIN, CANVAS_SIZE } from './buildPhotoAtlas.js';
import {
  checkPictureSize,
  chooseFace,
  DEFAULT_FACE_LIMITS,
  isHumanFace,
  type FaceLimits,
} from './findFace.js';
import type { HeadPose } from './headPose.js';
import { chooseFraming, toFrame, type Framing } from './framing.js';
import {
  decodeFitted,
  decodeSquare,
  DEFAULT_PHOTO_LIMITS,
  encodePng,
  probePhoto,
  type PhotoFormat,
  type PhotoLimits,
  type Region,
} from './photoImage.js';
import { findPadding, scalePadding } from './photoPadding.js';
import { fittingStockVoice, type FittingVoice } from './photoVoice.js';
import { turnUpright, UPRIGHT_BEYOND_DEG } from './uprightFace.js';
import { photoThreadPool, type PhotoThreadPool } from './photoThreadPool.js';

/**
 * A photo avatar's build: from the uploaded picture to the atlas file the media core renders
 * and the preview. Decoding (sharp) runs on libuv's pool, face detection and the atlas on the
 * photo worker: the event loop only moves bytes between them.
 */

/** The format of photo atlas files; a build in another format must be made again. */
export const PHOTO_BUILD_FORMAT = 'visage-photo-1';
/** Face detection sees the picture at most this large (the detector itself works at 512). */
export const DETECTION_SIDE = 2048;

export type PhotoBuildStage = 'decoding' | 'finding the face' | 'framing' | 'building' | 'encoding';

export interface PhotoBuildOptions {
  /** The id the atlas is known by (the build blob's id). */
  atlasId: string;
  limits?: PhotoLimits;
  faceLimits?: FaceLimits;
  pool?: PhotoThreadPool;
  /** Told as each stage starts. */
  onStage?: (stage: PhotoBuildStage) => void;
}

export interface PhotoBuildOutput {
  format: PhotoFormat;
  width: number;
  height: number;
  /** The atlas file (see decodePhotoBuild). */
  build: Buffer;
  /** The neutral frame, 512x512 PNG. */
  preview: Buffer;
  /**
   * How many faces both detectors found: the one used, and any under SECOND_FACE_SHARE of its
   * size (findFace.ts; a face as large as that is refused with `multiple_faces`).
   */
  faces: number;
  pose: HeadPose;
  /**
   * Where the head was tilted beyond UPRIGHT_BEYOND_DEG: how far the part of the picture around
   * it was turned (clockwise) before the frame was cut, and which square of the picture it was;
   * `framing` is then in the turned part's pixels.
   */
  upright: { degrees: number; region: Region } | undefined;
  framing: Framing;
  /** The stock voice that fits the face, and the estimate it was chosen by (photoVoice.ts). */
  voice: FittingVoice;
  /**
   * The widest-open frame (512 x 512 I420) with the dark of the mouth grey at the same luma, on
   * which the build aimed the dark's warmth where a face detector puts the lips: a reference for
   * measuring, not for showing (the detector places the lips with the inside's colour as well as
   * its light; test/support/mouthUpClose.ts). Undefined where the build did not aim.
   */
  aimFrame?: Uint8Array;
  /** Milliseconds per stage, and the atlas build's own parts. */
  timings: Record<string, number>;
}

export async function buildPhotoAvatar(
  bytes: Uint8Array,
  options: PhotoBuildOptions,
): Promise<PhotoBuildOutput> {
  const pool = options.pool ?? photoThreadPool();
  const timings: Record<string, number> = {};
  let mark = performance.now();
  const stage = (name: PhotoBuildStage) => {
    options.onStage?.(name);
  };
  const done = (name: string) => {
    const now = performance.now();
    timings[name] = Math.round(now - mark);
    mark = now;
  };

  stage('decoding');
  const source = await probePhoto(bytes, options.limits ?? DEFAULT_PHOTO_LIMITS);
  const faceLimits = options.faceLimits ?? DEFAULT_FACE_LIMITS;
  checkPictureSize(source.width, source.height, faceLimits);
  const picture = await decodeFitted(source, DETECTION_SIDE);
  done('decode');

  stage('finding the face');
  const faces = await pool.detect(picture.data, picture.width, picture.height);
  const toSource = source.width / picture.width;
  const face = chooseFace(faces, toSource, faceLimits);
  let landmarks = face.landmarks.map((p) => ({ x: p.x * toSource, y: p.y * toSource }));
  done('detect');

  stage('framing');
  // A tilted head is turned upright; the frame is then cut from the turned part.
  const upright = await turnUpright(source, landmarks, face.pose.rollDeg, pool, {
    detectionSide: DETECTION_SIDE,
    limits: faceLimits,
    // A photo turned before it was uploaded has flat corners, which are not the picture.
    padding:
      Math.abs(face.pose.rollDeg) > UPRIGHT_BEYOND_DEG
        ? scalePadding(findPadding(picture), toSource)
        : [],
  });
  const cropSource = upright?.source ?? source;
  if (upright) landmarks = upright.landmarks;
  // The frame's corner on a whole pixel of the scaled picture: the crop is exact.
  const chosen = chooseFraming(
    landmarks,
    cropSource.width,
    cropSource.height,
    upright && { inPicture: upright.inPicture, least: upright.least },
  );
  const scale = 512 / chosen.size;
  const left = Math.round(chosen.x * scale);
  const top = Math.round(chosen.y * scale);
  const framing: Framing = { x: left / scale, y: top / scale, size: chosen.size };
  const canvas = await decodeSquare(cropSource, scale, {
    left: left - CANVAS_MARGIN,
    top: top - CANVAS_MARGIN,
    size: CANVAS_SIZE,
  });
  done('crop');

  stage('building');
  const frameLandmarks = landmarks.map((p) => toFrame(framing, p));
  const built = await pool.build(canvas.data, frameLandmarks, options.atlasId, scale);
  done('build');

  stage('encoding');
  const build = encodeAtlasFile(built.atlas, {
    format: PHOTO_BUILD_FORMAT,
    framing,
    source: { format: source.format, width: source.width, height: source.height },
    ...(upright && { upright: { degrees: upright.degrees, region: upright.region } }),
    landmarks: frameLandmarks.map((p) => [round(p.x), round(p.y)]),
  });
  const preview = await encodePng({ width: 512, height: 512, data: built.neutral });
  done('encode');
  for (const [name, ms] of Object.entries(built.timings)) timings[`build_${name}`] = Math.round(ms);
  return {
    format: source.format,
    width: source.width,
    height: source.height,
    build,
    preview,
    faces: faces.filter((f) => isHumanFace(f, faceLimits)).length,
    pose: face.pose,
    framing,
    voice: fittingStockVoice(face.maleProbability),
    upright: upright && { degrees: upright.degrees, region: upright.region },
    aimFrame: built.aimFrame,
    timings,
  };
}

/** The atlas in a photo build file, checked (format, id, checksum, layout). */
export function decodePhotoBuild(bytes: Uint8Array, atlasId: string): SharedAvatarAtlas {
  return decodeAtlasFile(bytes, { format: PHOTO_BUILD_FORMAT, avatarId: atlasId }).shared;
}

/** The framing a build was made with (from its header; no checksum work). */
export function photoBuildFraming(bytes: Uint8Array): Framing {
  const header = readAtlasFileHeader(bytes);
  return header.framing as Framing;
}

const round = (v: number) => Math.round(v * 100) / 100;
