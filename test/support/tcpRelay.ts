// SPDX-License-Identifier: GPL-3.0-or-later
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay on loopback in front of a server: the network between one client and it, which a
 * test can cut (open connections are reset, new ones refused) and mend, to put one client
 * behind a partition while others still reach the server.
 */
export interface TcpRelay {
  /** The relay's port on 127.0.0.1. */
  readonly port: number;
  /** Resets every open connection; new ones are closed at once until `mend`. */
  cut(): void;
  mend(): void;
  close(): Promise<void>;
}

export async function startTcpRelay(targetPort: number): Promise<TcpRelay> {
  const open = new Set<Socket>();
  let isCut = false;
  const server: Server = createServer((client) => {
    if (isCut) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      open.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        open.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the relay has no port');
  return {
    port: address.port,
    cut() {
      isCut = true;
      for (const socket of open) socket.resetAndDestroy();
    },
    mend() {
      isCut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
