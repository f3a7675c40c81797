// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * A provider URL under the operator's base URL (http or https; a path prefix is kept, so a
 * gateway can serve several providers). `socket` turns http into ws and https into wss.
 */
export function providerUrl(
  baseUrl: string,
  path: string,
  opts: { socket?: boolean; query?: Record<string, string> } = {},
): URL {
  const base = new URL(baseUrl);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new Error(`provider base URL must be http(s): ${base.protocol}`);
  }
  const prefix = base.pathname.replace(/\/+$/, '');
  const url = new URL(base.origin + prefix + path);
  for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
  if (opts.socket) url.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
  return url;
}
