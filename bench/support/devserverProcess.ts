// SPDX-License-Identifier: GPL-3.0-or-later
// The dev server alone in its own process, so that the benchmark measures its CPU time without
// the clients' (rtc-node's native threads would otherwise count too). Forked by
// bench/devserver.bench.ts with an IPC channel: it answers `cpu` with its process CPU time.
import { pino } from 'pino';
import { startDevServer } from '../../src/devserver/index.js';
import { API_KEY, API_SECRET } from '../../test/devserver/publishers.js';

const address = process.argv[2];
if (!address || !process.send) throw new Error('fork me with the namespace address');

const server = await startDevServer({
  port: 0,
  host: address,
  nodeIp: address,
  keys: { [API_KEY]: API_SECRET },
  emptyRoomTimeoutMs: 1_000,
  logger: pino({ level: 'warn' }),
});

process.on('message', (message: { type: string }) => {
  if (message.type === 'cpu') {
    const usage = process.cpuUsage();
    process.send!({
      type: 'cpu',
      cpuMs: (usage.user + usage.system) / 1000,
      at: performance.now(),
    });
  } else if (message.type === 'close') {
    void server.close().then(() => process.exit(0));
  }
});
process.send({ type: 'ready', url: server.url });
