// SPDX-License-Identifier: GPL-3.0-or-later
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { lookup as dnsLookup } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AssetError } from '../../src/server/assets/assetError.js';
import { isPublicAddress } from '../../src/server/assets/publicAddress.js';
import { UrlFetcher } from '../../src/server/assets/urlFetcher.js';

let peer: Server;
let port: number;
const requests: string[] = [];

beforeAll(async () => {
  peer = createServer((req, res) => {
    requests.push(`${req.headers.host}${req.url}`);
    if (req.url === '/to-private') {
      res.writeHead(302, { location: `http://private.test:${port}/clip` });
      return res.end();
    }
    const hop = /^\/redirect\?to=(.+)$/.exec(req.url ?? '');
    if (hop) {
      res.writeHead(302, { location: decodeURIComponent(hop[1]!) });
      return res.end();
    }
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'audio/wav' });
      return res.end(Buffer.alloc(5000));
    }
    res.writeHead(200, { 'content-type': 'audio/wav' });
    res.end(Buffer.from('RIFF'));
  });
  await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
  port = (peer.address() as AddressInfo).port;
});
afterAll(() => new Promise((r) => peer.close(r)));

/**
 * DNS is the edge we cannot own in a test: `public.test` and `private.test` both resolve to
 * the loopback peer, and the address policy treats only the first as public.
 */
const fakeDns = ((host: string, _opts: object, cb: (e: Error | null, a: unknown) => void) => {
  const address =
    host === 'public.test' ? '127.0.0.1' : host === 'private.test' ? '127.0.0.2' : null;
  if (!address) return cb(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }), []);
  cb(null, [{ address, family: 4 }]);
}) as unknown as typeof dnsLookup;

function fetcher(maxBytes = 1_000_000) {
  return new UrlFetcher({
    allowPrivate: false,
    timeoutMs: 2_000,
    maxBytes,
    lookup: fakeDns,
    isAllowedAddress: (a) => a === '127.0.0.1',
  });
}

describe('UrlFetcher', () => {
  it('fetches from an allowed address', async () => {
    const f = fetcher();
    const clip = await f.fetch(`http://public.test:${port}/clip`);
    expect(Buffer.from(clip.bytes).toString()).toBe('RIFF');
    expect(clip.contentType).toBe('audio/wav');
    await f.close();
  });

  it('re-checks every redirect and refuses one that resolves to a private address', async () => {
    const f = fetcher();
    requests.length = 0;
    const err = await f.fetch(`http://public.test:${port}/to-private`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AssetError);
    expect((err as AssetError).code).toBe('url_not_allowed');
    // The private hop was never contacted.
    expect(requests).toEqual([`public.test:${port}/to-private`]);
    await f.close();
  });

  it('bounds the size and reports names that do not resolve', async () => {
    const f = fetcher(1000);
    await expect(f.fetch(`http://public.test:${port}/big`)).rejects.toMatchObject({
      code: 'file_too_large',
    });
    await expect(f.fetch(`http://nowhere.test:${port}/`)).rejects.toMatchObject({
      code: 'url_unreachable',
    });
    await f.close();
  });

  it('classifies addresses', () => {
    for (const a of [
      '8.8.8.8',
      '1.1.1.1',
      '2606:4700:4700::1111',
      // Embedded IPv4 forms carrying a public address are judged by it.
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '2002:808:808::1',
      '2001:0:4136:e378:8000:63bf:f7f7:f7f7', // Teredo, client 8.8.8.8
    ])
      expect(isPublicAddress(a), a).toBe(true);
    for (const a of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:10.0.0.1',
      '::ffff:127.0.0.1',
      'not-an-ip',
      ...EMBEDDED_PRIVATE,
      '::',
      'fe80::1%eth0',
      '64:ff9b:1::808:808', // NAT64 local-use prefix: local by definition
      '2001:db8::1',
      '100::1',
      'ff02::1',
      '192.0.0.8',
      '198.18.0.1',
      '255.255.255.255',
      '127.1',
      '0x7f.1',
      '2130706433',
      '0177.0.0.1',
    ]) {
      expect(isPublicAddress(a), a).toBe(false);
    }
  });
});

/** IPv6 spellings of loopback, private and metadata IPv4 addresses (issue 9, item 11). */
const EMBEDDED_PRIVATE = [
  '::127.0.0.1', // IPv4-compatible
  '::7f00:1',
  '::ffff:7f00:1', // IPv4-mapped, hex
  '::ffff:0:7f00:1', // SIIT
  '::ffff:0:a9fe:a9fe', // SIIT, 169.254.169.254
  '64:ff9b::7f00:1', // NAT64 well-known prefix
  '64:ff9b::a00:1',
  '2002:7f00:1::1', // 6to4
  '2002:a9fe:a9fe::', // 6to4, metadata
  '2001:0:4136:e378:8000:63bf:80ff:fffe', // Teredo, client 127.0.0.1
];

describe('UrlFetcher with the real address policy (private addresses not allowed)', () => {
  /**
   * The loopback peer is reachable only as `public.test`, the one name the policy lets through;
   * everything else is judged by isPublicAddress, as in production.
   */
  function policyFetcher() {
    return new UrlFetcher({
      allowPrivate: false,
      timeoutMs: 2_000,
      maxBytes: 1_000_000,
      lookup: fakeDns,
      isAllowedAddress: (a) => a === '127.0.0.1' || isPublicAddress(a),
    });
  }

  const literalHosts = [
    ...EMBEDDED_PRIVATE.map((a) => `[${a}]`),
    '[::1]',
    '[::]',
    '[fe80::1]',
    '127.0.0.2',
    '0x7f.0.0.2',
    '2130706434',
    '0177.0.0.2',
    '169.254.169.254',
  ];

  it.each(literalHosts)('refuses http://%s/ without contacting it', async (host) => {
    const f = policyFetcher();
    requests.length = 0;
    await expect(f.fetch(`http://${host}:${port}/clip`)).rejects.toMatchObject({
      code: 'url_not_allowed',
    });
    expect(requests).toEqual([]);
    await f.close();
  });

  it.each(literalHosts)('refuses a redirect to http://%s/ without following it', async (host) => {
    const f = policyFetcher();
    requests.length = 0;
    const target = encodeURIComponent(`http://${host}:${port}/clip`);
    await expect(f.fetch(`http://public.test:${port}/redirect?to=${target}`)).rejects.toMatchObject(
      { code: 'url_not_allowed' },
    );
    expect(requests).toEqual([`public.test:${port}/redirect?to=${target}`]);
    await f.close();
  });
});
