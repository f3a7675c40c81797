// SPDX-License-Identifier: Apache-2.0
// Before the worker registers: is an LLM there at all? Without one the avatar would join and
// never speak, with nothing in the log. A TCP connection to the endpoint is enough to tell (it
// costs no tokens); a refused key or an unknown model is reported on the first turn instead.
import { connect } from 'node:net';

const CONNECT_TIMEOUT_MS = 3_000;

/** What is wrong with the LLM settings, or undefined when the endpoint answers. */
export async function llmProblem(env = process.env): Promise<string | undefined> {
  if (!env.OPENAI_BASE_URL && !env.OPENAI_API_KEY) {
    return 'neither OPENAI_BASE_URL (a local or hosted OpenAI-compatible server) nor OPENAI_API_KEY (OpenAI) is set';
  }
  const base = env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1';
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return `OPENAI_BASE_URL is not a URL: ${base}`;
  }
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: CONNECT_TIMEOUT_MS });
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(`nothing answers at ${base} (no connection within ${CONNECT_TIMEOUT_MS / 1000} s)`);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      resolve(`nothing answers at ${base} (${err.code ?? err.message})`);
    });
  });
}

/** The message a user sees when no LLM is reachable: what to set, or how to run without one. */
export function llmHelp(problem: string): string {
  return [
    `agent-worker: no LLM is reachable: ${problem}.`,
    'Set one of:',
    '  OPENAI_BASE_URL=http://127.0.0.1:11434/v1 OPENAI_MODEL=llama3.2   (a local Ollama, llama.cpp, vLLM…)',
    '  OPENAI_API_KEY=sk-...                                             (OpenAI; OPENAI_MODEL defaults to gpt-4o-mini)',
    'or run it offline, with an echo agent that needs no LLM:',
    '  npx tsx examples/agent-worker/agent.ts dev --offline',
  ].join('\n');
}
