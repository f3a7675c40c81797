import { startLivekitProcess, type LivekitProcess } from '../../src/cli/livekitProcess.js';

/** The embedded LiveKit server of a bench, with the keys its nodes and viewers use. */
export interface BenchLivekit {
  process: LivekitProcess;
  url: string;
  apiKey: string;
  apiSecret: string;
}

/**
 * Starts the embedded LiveKit server in its own process, as `visage dev` does, on the namespace
 * address, with a fresh secret; its lines go to stderr (a bench node's stdout answers the bench).
 */
export async function startBenchLivekit(address: string): Promise<BenchLivekit> {
  const apiSecret = `bench-${Math.random().toString(36).slice(2)}`;
  const process = await startLivekitProcess({
    port: 0,
    host: address,
    nodeIp: address,
    keys: { devkey: apiSecret },
    command: ['--import', 'tsx', 'test/cli/cliEntry.ts'],
    logLevel: 'warn',
    output: globalThis.process.stderr,
  });
  return { process, url: process.url, apiKey: 'devkey', apiSecret };
}
