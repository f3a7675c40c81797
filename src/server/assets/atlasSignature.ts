// SPDX-License-Identifier: GPL-3.0-or-later
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ENDPOINTS } from '@visage-avatar/client/api';

/**
 * Signed atlas URLs: `GET /v1/avatars/{id}/atlas?expires=<unix s>&sig=<base64url>`, fetched by a
 * browser with no API key. The signature is an HMAC-SHA256, keyed with a secret the database
 * keeps (serverSecrets.ts, the same on every node), over `<avatar id>\n<expires>`: the URL opens
 * that avatar's atlas until then, and nothing else.
 *
 * The expiry is rounded up to a day boundary (UTC) at least `minValidS` ahead, so a page gets the
 * same URL all day and browsers and CDNs cache one copy; a URL handed out is good for one to two
 * days.
 */

/** The name of the signing secret's row in `server_secrets`. */
export const ATLAS_SECRET_NAME = 'atlas-url-hmac';

const DAY_S = 86_400;
/** A session configured to run longer names the last URL after that (and it expires). */
export const MAX_DAYS_AHEAD = 400;

export interface AtlasSignerOptions {
  /** The signing key (the database's row, read once). */
  secret: () => Promise<Buffer>;
  /** A URL is good for at least this long (seconds); one day unless told. */
  minValidS?: number;
  /** Unix ms; the wall clock unless told (tests). */
  now?: () => number;
}

export interface SignedAtlas {
  expires: number;
  sig: string;
}

export class AtlasSigner {
  private key: Promise<Buffer> | undefined;

  constructor(private readonly o: AtlasSignerOptions) {}

  /** The expiry and signature a URL for `avatarId` carries today (or on the day of `atMs`). */
  async sign(avatarId: string, atMs = this.now()): Promise<SignedAtlas> {
    const nowS = Math.floor(atMs / 1000);
    const minValid = this.o.minValidS ?? DAY_S;
    const expires = Math.ceil((nowS + minValid) / DAY_S) * DAY_S;
    return { expires, sig: this.mac(await this.secret(), avatarId, expires) };
  }

  /** The absolute URL under `baseUrl` (the service's public origin, with any path prefix). */
  async url(baseUrl: string, avatarId: string, atMs = this.now()): Promise<string> {
    return urlOf(baseUrl, avatarId, await this.sign(avatarId, atMs));
  }

  /**
   * The URLs handed out today and on each later day until `forS` seconds from now (a session's
   * longest run; at most `MAX_DAYS_AHEAD` days), by expiry: what a session that outlives a day
   * names in its later face streams, signed now (the media process holds no secret).
   */
  async urls(
    baseUrl: string,
    avatarId: string,
    forS: number,
  ): Promise<{ url: string; expires: number }[]> {
    const now = this.now();
    const days = Math.min(Math.ceil(Math.max(forS, 0) / DAY_S), MAX_DAYS_AHEAD);
    const out: { url: string; expires: number }[] = [];
    for (let day = 0; day <= days; day++) {
      const signed = await this.sign(avatarId, now + day * DAY_S * 1000);
      out.push({ url: urlOf(baseUrl, avatarId, signed), expires: signed.expires });
    }
    return out;
  }

  /**
   * Whether `sig` is this service's signature of `avatarId` until `expires`, and `expires` has
   * not passed. Seconds left when valid, else undefined (the caller says no more than that).
   */
  async verify(avatarId: string, expires: number, sig: string): Promise<number | undefined> {
    const left = expires - Math.floor(this.now() / 1000);
    if (left <= 0) return undefined;
    const expected = Buffer.from(this.mac(await this.secret(), avatarId, expires), 'base64url');
    const given = Buffer.from(sig, 'base64url');
    if (given.byteLength !== expected.byteLength || !timingSafeEqual(given, expected)) {
      return undefined;
    }
    return left;
  }

  private mac(key: Buffer, avatarId: string, expires: number): string {
    return createHmac('sha256', key).update(`${avatarId}\n${expires}`).digest('base64url');
  }

  private secret(): Promise<Buffer> {
    // Read once per process; a failed read (the database away) is tried again next time.
    this.key ??= this.o.secret().catch((err: unknown) => {
      this.key = undefined;
      throw err;
    });
    return this.key;
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }
}

function urlOf(baseUrl: string, avatarId: string, { expires, sig }: SignedAtlas): string {
  const path = ENDPOINTS.getAvatarAtlas.path.replace('{id}', encodeURIComponent(avatarId));
  return `${baseUrl.replace(/\/+$/, '')}${path}?expires=${expires}&sig=${sig}`;
}
