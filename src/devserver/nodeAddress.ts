// SPDX-License-Identifier: GPL-3.0-or-later
import { networkInterfaces } from 'node:os';

/**
 * The address advertised in ICE candidates when none is configured: the first non-internal IPv4
 * address. libwebrtc ignores loopback interfaces, so 127.0.0.1 is only a last resort (on a
 * machine without any other interface WebRTC cannot connect anyway).
 */
export function defaultNodeIp(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === 'IPv4' && !address.internal) return address.address;
    }
  }
  return '127.0.0.1';
}

/** Whether `ip` belongs to one of this machine's interfaces (so a UDP socket can bind to it). */
export function isLocalAddress(ip: string): boolean {
  return Object.values(networkInterfaces()).some((addresses) =>
    (addresses ?? []).some((address) => address.address === ip),
  );
}
