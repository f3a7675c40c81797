// SPDX-License-Identifier: GPL-3.0-or-later
import { ApiError } from './apiError.js';
import { hashSecret, type ApiKeyRecord, type Store } from '../store/store.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Looks keys up by their secret; requests that arrive with the same secret while its lookup is
 * under way share that lookup (one query for a burst of one key, not one per request). Nothing
 * is kept once it answers: the next request looks again.
 */
export class KeyLookups {
  private readonly underWay = new Map<string, Promise<ApiKeyRecord | undefined>>();

  constructor(private readonly store: Store) {}

  find(secret: string): Promise<ApiKeyRecord | undefined> {
    const hash = hashSecret(secret);
    const pending = this.underWay.get(hash);
    if (pending) return pending;
    const lookup = this.store
      .findActiveKeyBySecret(secret)
      .finally(() => this.underWay.delete(hash));
    this.underWay.set(hash, lookup);
    return lookup;
  }
}

/** The secret of `Authorization: Bearer sk_…`, if the header is one. */
export function secretOf(header: string | null): string | undefined {
  const secret = header === null ? undefined : BEARER.exec(header)?.[1];
  return secret?.startsWith('sk_') ? secret : undefined;
}

/**
 * Resolves `Authorization: Bearer sk_…` to a live key. Looked up on every request (an indexed
 * hash lookup, shared by the requests that arrive while it runs), so a key revoked by the CLI
 * stops working at once.
 */
export async function authenticate(keys: KeyLookups, header: string | null): Promise<ApiKeyRecord> {
  const challenge = { headers: { 'www-authenticate': 'Bearer' } };
  if (!header || header.trim() === '') {
    throw new ApiError(
      'missing_api_key',
      'Send your secret key as `Authorization: Bearer sk_…`.',
      challenge,
    );
  }
  const secret = secretOf(header);
  if (!secret) {
    throw new ApiError(
      'invalid_api_key',
      'The Authorization header must be `Bearer sk_…`.',
      challenge,
    );
  }
  const key = await keys.find(secret);
  if (!key) throw new ApiError('invalid_api_key', 'The key is unknown or revoked.', challenge);
  return key;
}
