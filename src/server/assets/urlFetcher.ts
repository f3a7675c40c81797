// SPDX-License-Identifier: GPL-3.0-or-later
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Agent, Dispatcher } from 'undici';
import { AssetError } from './assetError.js';
import { isPublicAddress } from './publicAddress.js';

export interface UrlFetcherOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects?: number;
  /** DNS resolution; replaceable in tests only. */
  lookup?: typeof dnsLookup;
  /** Which resolved addresses may be contacted; replaceable in tests only. */
  isAllowedAddress?: (address: string) => boolean;
}

export interface FetchedClip {
  bytes: Uint8Array;
  contentType: string | null;
  finalUrl: string;
}

class AddressRefused extends Error {}

/**
 * Fetches a reference clip from a caller-supplied URL without becoming an SSRF hole: http(s)
 * only, every resolved address checked at connect time (so DNS rebinding cannot swap in a
 * private one after the check), each redirect re-validated, bounded in time and size.
 */
export class UrlFetcher {
  /** undici and its agent, made on the first fetch: a node that fetches nothing never loads it. */
  private client: Promise<{ agent: Agent; request: typeof import('undici').request }> | undefined;
  private readonly makeAgent: (undici: typeof import('undici')) => Agent;
  private readonly allowed: (address: string) => boolean;

  constructor(private readonly options: UrlFetcherOptions) {
    this.allowed = options.allowPrivate
      ? () => true
      : (options.isAllowedAddress ?? isPublicAddress);
    const resolve = options.lookup ?? dnsLookup;
    const checkedLookup = ((
      hostname: string,
      opts: object,
      callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
    ) => {
      resolve(hostname, { ...opts, all: true }, (err, addresses) => {
        if (err) return callback(err, []);
        const list = addresses as LookupAddress[];
        const refused = list.find((a) => !this.allowed(a.address));
        if (refused || list.length === 0) {
          return callback(new AddressRefused(`${hostname} resolves to a non-public address`), []);
        }
        if ((opts as { all?: boolean }).all) return callback(null, list);
        callback(null, list[0]!.address, list[0]!.family);
      });
    }) as unknown as typeof dnsLookup;
    this.makeAgent = (undici) =>
      new undici.Agent({
        connect: { lookup: checkedLookup, timeout: options.timeoutMs },
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      });
  }

  async fetch(rawUrl: string): Promise<FetchedClip> {
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    let url = this.checkUrl(rawUrl);
    this.client ??= import('undici').then((undici) => ({
      agent: this.makeAgent(undici),
      request: undici.request,
    }));
    const { agent, request } = await this.client;
    for (let hop = 0; hop <= (this.options.maxRedirects ?? 5); hop++) {
      let res: Dispatcher.ResponseData;
      try {
        res = await request(url, {
          dispatcher: agent,
          method: 'GET',
          signal,
          headers: { accept: 'audio/*, */*;q=0.5', 'user-agent': 'visage-voice-fetcher' },
        });
      } catch (err) {
        throw this.unreachable(url, err);
      }
      if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
        await res.body.dump();
        url = this.checkUrl(new URL(String(res.headers.location), url).toString());
        continue;
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        await res.body.dump();
        throw new AssetError(
          'url_unreachable',
          `Fetching the url answered HTTP ${res.statusCode}.`,
          'url',
        );
      }
      return {
        bytes: await this.readBounded(res),
        contentType: (res.headers['content-type'] as string | undefined) ?? null,
        finalUrl: url.toString(),
      };
    }
    throw new AssetError('url_unreachable', 'The url redirects too many times.', 'url');
  }

  async close(): Promise<void> {
    await (await this.client)?.agent.close();
  }

  private checkUrl(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new AssetError('url_not_allowed', 'The url is not a valid absolute URL.', 'url');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new AssetError('url_not_allowed', 'Only http and https URLs can be fetched.', 'url');
    }
    // Literal IPs (in any spelling a resolver accepts) are checked here, since connecting to one
    // involves no lookup; host names are checked when they resolve (connect time).
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if ((isIP(host) !== 0 || ipaddr.isValid(host)) && !this.allowed(host)) {
      throw new AssetError('url_not_allowed', 'The url points to a non-public address.', 'url');
    }
    return url;
  }

  private unreachable(url: URL, err: unknown): AssetError {
    let cause: unknown = err;
    while (cause instanceof Error) {
      if (cause instanceof AddressRefused) {
        return new AssetError('url_not_allowed', 'The url points to a non-public address.', 'url');
      }
      cause = cause.cause;
    }
    const reason = err instanceof Error && err.name === 'TimeoutError' ? 'timed out' : 'failed';
    return new AssetError('url_unreachable', `Fetching ${url.host} ${reason}.`, 'url');
  }

  private async readBounded(res: Dispatcher.ResponseData): Promise<Uint8Array> {
    const max = this.options.maxBytes;
    const declared = Number(res.headers['content-length'] ?? NaN);
    const tooLarge = () =>
      new AssetError('file_too_large', `The clip is larger than ${max} bytes.`);
    if (Number.isFinite(declared) && declared > max) {
      res.body.destroy();
      throw tooLarge();
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).byteLength;
      if (size > max) {
        res.body.destroy();
        throw tooLarge();
      }
      chunks.push(chunk as Buffer);
    }
    return new Uint8Array(Buffer.concat(chunks));
  }
}
