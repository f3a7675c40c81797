// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Why a photo cannot become an avatar. The codes are the API's (415 `unsupported_image`, 422 for
 * the rest); the message says what to change.
 */
export type PhotoErrorCode =
  | 'unsupported_image'
  | 'unreadable_image'
  | 'image_too_large'
  | 'no_face_found'
  | 'face_too_small'
  | 'multiple_faces'
  | 'face_not_frontal';

export class PhotoError extends Error {
  constructor(
    readonly code: PhotoErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'PhotoError';
  }
}
