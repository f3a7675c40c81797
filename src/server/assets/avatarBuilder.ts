// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import { CAPACITY_RETRY_AFTER_SECONDS } from '@visage-avatar/client/api';
import {
  buildPhotoAvatar,
  DEFAULT_FACE_LIMITS,
  PhotoError,
  type PhotoBuildOutput,
  type PhotoBuildStage,
} from '../../media/photo/index.js';
import { AssetError } from './assetError.js';
import type { Limits } from '../config.js';

/** How often a build that is still running says where it is. */
const PROGRESS_EVERY_MS = 1000;

/**
 * Runs photo avatar builds for the API: a bounded number at once per node (each holds a
 * picture in memory and a core for a second or two), progress logged while one takes more than
 * a second, and the photo's problems turned into the API's errors.
 */
export class AvatarBuilder {
  private inFlight = 0;

  constructor(private readonly limits: Limits) {}

  async build(
    bytes: Uint8Array,
    atlasId: string,
    log: Logger,
    /** The request field the picture came in (`image` or `image_url`), for `error.param`. */
    param: string,
  ): Promise<PhotoBuildOutput> {
    if (this.inFlight >= this.limits.avatarBuildsInFlight) {
      throw new AssetError(
        'platform_busy',
        'The avatar builder is busy; retry shortly.',
        undefined,
        CAPACITY_RETRY_AFTER_SECONDS,
      );
    }
    this.inFlight++;
    const started = performance.now();
    let stage: PhotoBuildStage = 'decoding';
    const progress = setInterval(() => {
      log.info(
        { stage, elapsed_ms: Math.round(performance.now() - started) },
        'building the photo avatar',
      );
    }, PROGRESS_EVERY_MS);
    progress.unref();
    try {
      const output = await buildPhotoAvatar(bytes, {
        atlasId,
        limits: { maxPixels: this.limits.imageMaxPixels },
        faceLimits: { ...DEFAULT_FACE_LIMITS, minFacePx: this.limits.minFacePx },
        onStage: (s) => (stage = s),
      });
      log.info(
        {
          ms: Math.round(performance.now() - started),
          format: output.format,
          width: output.width,
          height: output.height,
          faces: output.faces,
          // The apparent register the default voice is chosen by (not identifying: no image).
          voice_estimate: {
            male_probability: Math.round(output.voice.maleProbability * 1000) / 1000,
            register: output.voice.register,
            fitting_voice_id: output.voice.voiceId,
          },
          timings: output.timings,
        },
        'photo avatar built',
      );
      return output;
    } catch (err) {
      if (err instanceof PhotoError) throw new AssetError(err.code, err.message, param);
      if (err instanceof AssetError) throw err;
      // The thread gave up on it (time, memory) or it broke the pipeline: the picture's fault.
      log.warn({ err, stage }, 'photo avatar build failed');
      throw new AssetError('unreadable_image', 'The picture could not be processed.', param);
    } finally {
      clearInterval(progress);
      this.inFlight--;
    }
  }
}
