// SPDX-License-Identifier: GPL-3.0-or-later
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { z } from 'zod';
import type { CallerLiveKit } from '@visage-avatar/client/api';
import { isPublicAddress } from '../../assets/publicAddress.js';
import { CallerLiveKitError } from '../sessionErrors.js';

/** Where a session whose caller brought its own LiveKit joins, as its token says. */
export interface ResolvedCallerLiveKit {
  url: string;
  token: string;
  roomName: string;
  identity: string;
  /** The token's `lk.publish_on_behalf` attribute: the agent the avatar speaks for. */
  publishOnBehalf: string | null;
  expiresAt: Date;
}

export interface CallerLiveKitPolicy {
  /** `VISAGE_ALLOW_PRIVATE_URLS=1`: loopback and private LiveKit addresses are allowed. */
  allowPrivate: boolean;
  /**
   * The LiveKit the service is configured with: trusted by its operator, so a caller's URL with
   * the same host and port passes wherever it is (an agent beside `visage dev` on loopback).
   */
  ownUrl?: string;
  /** Resolves a host name to its addresses (default: the system resolver). */
  lookupAll?: (host: string) => Promise<string[]>;
  now?: () => number;
}

/** The token must stay usable at least this long: the avatar joins after validation. */
const MIN_REMAINING_SECONDS = 30;
/** Clock skew tolerated on `nbf`. */
const NOT_BEFORE_SKEW_SECONDS = 60;

/** The parts of LiveKit's access-token claims the avatar depends on. */
const claimsSchema = z.object({
  sub: z.string().min(1).max(256),
  exp: z.number(),
  nbf: z.number().optional(),
  video: z.object({
    room: z.string().min(1).max(256),
    roomJoin: z.literal(true),
    canPublish: z.boolean().optional(),
    canPublishData: z.boolean().optional(),
    canPublishSources: z.array(z.string()).optional(),
  }),
  attributes: z.record(z.string(), z.string()).optional(),
});

/**
 * Validates a caller's `livekit: { url, token }` before anything is created: the URL passes the
 * outbound address policy (ws/wss to public addresses unless private ones are allowed), and the
 * token is a LiveKit JWT for exactly one room that lets the avatar join and publish camera,
 * microphone and data, and is not expired. Its signature is the LiveKit server's to check (Visage
 * has no key for it); a server that refuses it refuses the join.
 */
export async function resolveCallerLiveKit(
  input: CallerLiveKit,
  policy: CallerLiveKitPolicy,
): Promise<ResolvedCallerLiveKit> {
  await checkUrl(input.url, policy);
  const claims = decodeClaims(input.token);
  const now = (policy.now ?? Date.now)() / 1000;
  if (claims.exp < now + MIN_REMAINING_SECONDS) {
    throw tokenError('has expired (or expires within 30 s)');
  }
  if (claims.nbf !== undefined && claims.nbf > now + NOT_BEFORE_SKEW_SECONDS) {
    throw tokenError('is not valid yet (nbf)');
  }
  const grant = claims.video;
  // LiveKit treats an absent publish grant as allowed; an explicit false is a refusal.
  if (grant.canPublish === false) throw tokenError('does not grant canPublish');
  if (grant.canPublishData === false) throw tokenError('does not grant canPublishData');
  const sources = grant.canPublishSources;
  if (sources && !(sources.includes('camera') && sources.includes('microphone'))) {
    throw tokenError('must allow publishing the camera and microphone sources');
  }
  return {
    url: input.url,
    token: input.token,
    roomName: grant.room,
    identity: claims.sub,
    publishOnBehalf: claims.attributes?.['lk.publish_on_behalf'] || null,
    expiresAt: new Date(claims.exp * 1000),
  };
}

function decodeClaims(token: string): z.infer<typeof claimsSchema> {
  const parts = token.split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) {
    throw tokenError('is not a JWT');
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
  } catch {
    throw tokenError('is not a JWT');
  }
  const parsed = claimsSchema.safeParse(payload);
  if (!parsed.success) {
    const field = parsed.error.issues[0]?.path.join('.') || 'claims';
    throw tokenError(
      field.startsWith('video')
        ? `does not grant joining exactly one room (${field})`
        : `is not a LiveKit access token (${field})`,
    );
  }
  return parsed.data;
}

async function checkUrl(url: string, policy: CallerLiveKitPolicy): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw urlError('`livekit.url` is not a URL.');
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') {
    throw urlError('`livekit.url` must be ws:// or wss://.');
  }
  if (parsed.username || parsed.password) {
    throw urlError('`livekit.url` must not carry credentials.');
  }
  if (policy.allowPrivate || sameServer(parsed, policy.ownUrl)) return;
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await (policy.lookupAll ?? lookupAll)(host);
  } catch {
    throw new CallerLiveKitError(
      'url_unreachable',
      `\`livekit.url\`: cannot resolve ${host}.`,
      'livekit.url',
    );
  }
  if (addresses.length === 0 || !addresses.every((a) => isPublicAddress(a))) {
    throw urlError('`livekit.url` must point to a public address.');
  }
}

function sameServer(url: URL, own: string | undefined): boolean {
  if (!own) return false;
  try {
    return new URL(own).host === url.host;
  } catch {
    return false;
  }
}

async function lookupAll(host: string): Promise<string[]> {
  return (await lookup(host, { all: true })).map((a) => a.address);
}

function tokenError(why: string): CallerLiveKitError {
  return new CallerLiveKitError(
    'invalid_livekit_token',
    `\`livekit.token\` ${why}.`,
    'livekit.token',
  );
}

function urlError(message: string): CallerLiveKitError {
  return new CallerLiveKitError('url_not_allowed', message, 'livekit.url');
}
