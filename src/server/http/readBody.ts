import { ApiError } from '../apiError.js';

/**
 * Reads a request body into memory, refusing it as soon as it grows past `limit` bytes (a
 * declared Content-Length over the limit is refused before reading anything).
 */
export async function readBody(
  req: Request,
  limit: number,
  code: 'body_too_large' | 'file_too_large' = 'body_too_large',
): Promise<Uint8Array> {
  const tooLarge = () => new ApiError(code, `The request body is larger than ${limit} bytes.`);
  const declared = Number(req.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  if (!req.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}
