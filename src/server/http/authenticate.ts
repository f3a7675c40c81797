import { ApiError } from '../apiError.js';
import type { ApiKeyRecord, Store } from '../store/store.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Resolves `Authorization: Bearer sk_…` to a live key. Looked up on every request (an indexed
 * hash lookup), so a key revoked by the CLI stops working at once.
 */
export async function authenticate(store: Store, header: string | null): Promise<ApiKeyRecord> {
  const challenge = { headers: { 'www-authenticate': 'Bearer' } };
  if (!header || header.trim() === '') {
    throw new ApiError(
      'missing_api_key',
      'Send your secret key as `Authorization: Bearer sk_…`.',
      challenge,
    );
  }
  const secret = BEARER.exec(header)?.[1];
  if (!secret || !secret.startsWith('sk_')) {
    throw new ApiError(
      'invalid_api_key',
      'The Authorization header must be `Bearer sk_…`.',
      challenge,
    );
  }
  const key = await store.findActiveKeyBySecret(secret);
  if (!key) throw new ApiError('invalid_api_key', 'The key is unknown or revoked.', challenge);
  return key;
}
