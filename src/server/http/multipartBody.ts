// SPDX-License-Identifier: GPL-3.0-or-later
import { ApiError } from './apiError.js';

/**
 * A multipart/form-data request body as FormData (its size is bounded before this reads it, by
 * bodyLimits.ts). A body that does not parse is 400 `validation_failed`.
 */
export async function readMultipartBody(req: Request, contentType: string): Promise<FormData> {
  const raw = new Uint8Array(await req.arrayBuffer());
  try {
    return await new Response(new Blob([raw as Uint8Array<ArrayBuffer>]), {
      headers: { 'content-type': contentType },
    }).formData();
  } catch {
    throw new ApiError('validation_failed', 'The multipart body could not be parsed.');
  }
}
