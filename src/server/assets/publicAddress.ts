// SPDX-License-Identifier: GPL-3.0-or-later
import ipaddr from 'ipaddr.js';

/**
 * Whether a server-side fetch may contact an address: only globally routable unicast. Loopback,
 * private, link-local (cloud metadata lives at 169.254.169.254), carrier-grade NAT, multicast,
 * documentation, benchmarking and reserved ranges are refused, as classified by `ipaddr.js`.
 *
 * IPv6 forms that carry an IPv4 address are judged by the IPv4 they carry, since a translator or
 * tunnel on the path may deliver them there: IPv4-compatible (::a.b.c.d), IPv4-mapped
 * (::ffff:a.b.c.d), SIIT (::ffff:0:a.b.c.d), NAT64 well-known (64:ff9b::a.b.c.d), 6to4
 * (2002:aabb:ccdd::) and Teredo (2001:0:server:flags:port:client, the client address is the
 * bitwise NOT of the last 32 bits). The NAT64 local-use prefix 64:ff9b:1::/48 only reaches
 * networks local to its operator and is refused whole, as is every IPv6 address outside the
 * global unicast block 2000::/3.
 *
 * Odd IPv4 spellings that resolvers accept (`127.1`, `0x7f.1`, `2130706433`, `0177.0.0.1`) are
 * parsed as the address they mean.
 */
export function isPublicAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return false;
  }
  return parsed.kind() === 'ipv4'
    ? isPublicIPv4(parsed as ipaddr.IPv4)
    : isPublicIPv6(parsed as ipaddr.IPv6);
}

function isPublicIPv4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast';
}

const NAT64_LOCAL_USE = ipaddr.parseCIDR('64:ff9b:1::/48');
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

function ipv4FromParts(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** Every IPv4 address an IPv6 address carries, by the forms named above. */
export function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const p = address.parts;
  const last = ipv4FromParts(p[6]!, p[7]!);
  const zeroPrefix = (n: number) => p.slice(0, n).every((part) => part === 0);
  if (zeroPrefix(6)) return [last]; // IPv4-compatible (deprecated), including :: and ::1
  if (zeroPrefix(5) && p[5] === 0xffff) return [last]; // IPv4-mapped
  if (zeroPrefix(4) && p[4] === 0xffff && p[5] === 0) return [last]; // SIIT
  if (p[0] === 0x64 && p[1] === 0xff9b && p.slice(2, 6).every((part) => part === 0)) {
    return [last]; // NAT64 well-known prefix
  }
  if (p[0] === 0x2002) return [ipv4FromParts(p[1]!, p[2]!)]; // 6to4
  if (p[0] === 0x2001 && p[1] === 0) {
    // Teredo: the server's address, then the client's, stored inverted.
    return [ipv4FromParts(p[2]!, p[3]!), ipv4FromParts(~p[6]! & 0xffff, ~p[7]! & 0xffff)];
  }
  return [];
}

function isPublicIPv6(address: ipaddr.IPv6): boolean {
  const p = address.parts;
  // The unspecified and loopback addresses sit inside the IPv4-compatible block.
  if (p.slice(0, 7).every((part) => part === 0) && p[7]! <= 1) return false;
  if (address.match(NAT64_LOCAL_USE)) return false;
  const carried = embeddedIPv4(address);
  if (carried.length > 0) return carried.every(isPublicIPv4);
  return address.match(GLOBAL_UNICAST) && address.range() === 'unicast';
}
