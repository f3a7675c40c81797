// SPDX-License-Identifier: GPL-3.0-or-later
import { TokenVerifier, type ClaimGrants } from 'livekit-server-sdk';

export type TokenCheck =
  { ok: true; apiKey: string; claims: ClaimGrants } | { ok: false; reason: string };

/** Reads the token from `Authorization: Bearer` (SDKs) or the `access_token` query (browsers). */
export function tokenFromRequest(
  authorization: string | undefined,
  searchParams: URLSearchParams,
): string | undefined {
  const match = authorization?.match(/^Bearer\s+(.+)$/i);
  if (match?.[1]) return match[1].trim();
  return searchParams.get('access_token') ?? undefined;
}

/**
 * Verifies an HS256 access token against the configured key/secret pairs. The key is the JWT's
 * `iss`; the reasons mirror LiveKit's wording so SDK error messages read the same.
 */
export async function verifyAccessToken(
  token: string | undefined,
  keys: Readonly<Record<string, string>>,
): Promise<TokenCheck> {
  if (!token) return { ok: false, reason: 'no authorization token provided' };
  const apiKey = issuerOf(token);
  if (apiKey === undefined) return { ok: false, reason: 'invalid token: malformed JWT' };
  const secret = keys[apiKey];
  if (secret === undefined) return { ok: false, reason: 'invalid token: unknown API key' };
  try {
    const claims = await new TokenVerifier(apiKey, secret).verify(token);
    return { ok: true, apiKey, claims };
  } catch (err) {
    const code = (err as { code?: string }).code;
    return { ok: false, reason: `invalid token: ${code ?? (err as Error).message}` };
  }
}

function issuerOf(token: string): string | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
      iss?: unknown;
    };
    return typeof decoded.iss === 'string' ? decoded.iss : undefined;
  } catch {
    return undefined;
  }
}
