// SPDX-License-Identifier: GPL-3.0-or-later
import { VERSION } from '../version.js';
import { UsageError } from './usage.js';

const USAGE = `Usage: visage <command> [options]

Commands:
  dev       run the API, the embedded database and an embedded LiveKit server (local use)
  serve     run the API for production against a real LiveKit deployment
  keys      create, list, update and revoke secret keys
  livekit   run the embedded LiveKit-compatible server alone

Run \`visage <command> --help\` for a command's options. \`visage --version\` prints the version.`;

/** Each command's module, loaded when it runs: `visage --version` need not load the server. */
const commands = {
  dev: () => import('./devCommand.js').then((m) => m.runDevCommand),
  serve: () => import('./serveCommand.js').then((m) => m.runServeCommand),
  keys: () => import('./keysCommand.js').then((m) => m.runKeysCommand),
};

/** The `visage` CLI. Returns the process exit code. */
export async function run(argv: string[], out = (line: string) => console.log(line)) {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'dev':
      case 'serve':
      case 'keys':
        return await (
          await commands[command]()
        )(rest, out);
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
      const known = command !== undefined && Object.hasOwn(commands, command);
      console.error(`Run \`visage ${known ? `${command} ` : ''}--help\` for usage.`);
      return 2;
    }
    console.error(`visage: ${(err as Error).message}`);
    return 1;
  }
}
