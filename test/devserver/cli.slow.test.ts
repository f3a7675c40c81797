// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseLivekitArgs, runLivekitCommand } from '../../src/devserver/cli.js';

describe('visage livekit', () => {
  it('parses port, keys, node address and UDP range', () => {
    expect(
      parseLivekitArgs([
        '--port',
        '7881',
        '--keys',
        'devkey:secret,other:s2',
        '--keys',
        'third:s3',
        '--node-ip',
        '10.0.0.5',
        '--udp-ports',
        '50000-50100',
      ]),
    ).toEqual({
      port: 7881,
      // Naming the node address opens signalling to the network on purpose.
      host: '0.0.0.0',
      keys: { devkey: 'secret', other: 's2', third: 's3' },
      generatedKeys: false,
      nodeIp: '10.0.0.5',
      udpPortRange: [50000, 50100],
      logLevel: 'info',
    });
    // By default: loopback only, and a random key pair instead of the well-known devkey:secret.
    const plain = parseLivekitArgs([]);
    expect(plain).toMatchObject({ port: 7880, host: '127.0.0.1', generatedKeys: true });
    if (plain === 'help') throw new Error('unexpected help');
    const [[key, secret]] = Object.entries(plain.keys) as [[string, string]];
    expect(key).not.toBe('devkey');
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(parseLivekitArgs(['--host', '192.168.1.2'])).toMatchObject({ host: '192.168.1.2' });
    expect(parseLivekitArgs(['--help'])).toBe('help');
  });

  it.each([
    [['--port', 'abc']],
    [['--port', '70000']],
    [['--keys', 'nosecret']],
    [['--keys', ':secret']],
    [['--udp-ports', '5000']],
    [['--udp-ports', '6000-5000']],
    [['--node-ip', 'localhost']],
    [['--log-level', 'loud']],
    [['--unknown']],
    [['positional']],
  ])('rejects %j with exit code 2', async (argv) => {
    expect(await runLivekitCommand(argv)).toBe(2);
  });

  it('prints help and exits 0', async () => {
    expect(await runLivekitCommand(['--help'])).toBe(0);
  });

  it('runs until SIGTERM, then shuts down cleanly', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        "import('./src/devserver/cli.ts').then(async (m) => process.exit(await m.runLivekitCommand(['--port', '0', '--host', '127.0.0.1', '--node-ip', '127.0.0.1', '--keys', 'cli-key:cli-secret-value', '--log-level', 'warn'])))",
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 20_000;
    while (!/server at ws:\/\/127\.0\.0\.1:\d+/.test(output)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no start: ${output}`);
      await sleep(100);
    }
    const port = Number(/127\.0\.0\.1:(\d+)/.exec(output)![1]);
    const validate = await fetch(`http://127.0.0.1:${port}/rtc/validate`);
    expect(validate.status).toBe(401);
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).not.toContain('cli-secret-value');
  });
});
