import { VERSION } from '../version.js';
import { DEV_USAGE, runDevCommand } from './devCommand.js';
import { KEYS_USAGE, runKeysCommand } from './keysCommand.js';
import { runServeCommand, SERVE_USAGE } from './serveCommand.js';
import { UsageError } from './usage.js';

const USAGE = `Usage: visage <command> [options]

Commands:
  dev       run the API, the embedded database and an embedded LiveKit server (local use)
  serve     run the API for production against a real LiveKit deployment
  keys      create, list, update and revoke secret keys
  livekit   run the embedded LiveKit-compatible server alone

Run \`visage <command> --help\` for a command's options. \`visage --version\` prints the version.`;

/** The `visage` CLI. Returns the process exit code. */
export async function run(argv: string[], out = (line: string) => console.log(line)) {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'dev':
        return await runDevCommand(rest, out);
      case 'serve':
        return await runServeCommand(rest, out);
      case 'keys':
        return await runKeysCommand(rest, out);
      case 'livekit': {
        const { runLivekitCommand } = await import('../devserver/cli.js');
        return await runLivekitCommand(rest);
      }
      case '--version':
      case '-v':
        out(VERSION);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        out(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command: ${command}`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`visage: ${err.message}`);
      const usage = { dev: DEV_USAGE, serve: SERVE_USAGE, keys: KEYS_USAGE }[command ?? ''];
      console.error(`Run \`visage ${usage ? `${command} ` : ''}--help\` for usage.`);
      return 2;
    }
    console.error(`visage: ${(err as Error).message}`);
    return 1;
  }
}
