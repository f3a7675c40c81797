// SPDX-License-Identifier: GPL-3.0-or-later
import { createServer } from 'node:net';

/** A loopback TCP port free at the moment of asking (for a child process to listen on). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
