// SPDX-License-Identifier: GPL-3.0-or-later
// The agent-worker example's start: loud failure without an LLM, and its offline echo agent.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { llm } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { EchoLLM, OFFLINE_GREETING } from '../../examples/agent-worker/echoLlm.js';
import { llmProblem } from '../../examples/agent-worker/llmCheck.js';
import './agentHarness.js';

const WORKER = fileURLToPath(new URL('../../examples/agent-worker/agent.ts', import.meta.url));

function runWorker(env: Record<string, string | undefined>) {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, 'dev'], {
    env: { ...process.env, OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  return new Promise<{ code: number | null; output: string }>((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

async function reply(chatCtx: llm.ChatContext): Promise<string> {
  let text = '';
  for await (const chunk of new EchoLLM().chat({ chatCtx })) text += chunk.delta?.content ?? '';
  return text;
}

describe('examples/agent-worker start-up', () => {
  it('fails at once, saying what to set, when no LLM answers', async () => {
    const { code, output } = await runWorker({
      VISAGE_API_KEY: `sk_${'x'.repeat(40)}`,
      // The LiveKit settings are checked first; these are never used (the LLM check fails).
      LIVEKIT_URL: 'ws://127.0.0.1:1',
      LIVEKIT_API_KEY: 'devkey',
      LIVEKIT_API_SECRET: 'x'.repeat(32),
      OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
    });
    expect(code).toBe(1);
    expect(output).toContain('no LLM is reachable: nothing answers at http://127.0.0.1:1/v1');
    expect(output).toContain('OPENAI_BASE_URL=');
    expect(output).toContain('OPENAI_API_KEY=');
    expect(output).toContain('agent.ts dev --offline');
  }, 120_000);

  it('names the missing settings when none are given', async () => {
    expect(await llmProblem({})).toMatch(/neither OPENAI_BASE_URL .* nor OPENAI_API_KEY/);
    expect(await llmProblem({ OPENAI_BASE_URL: 'not a url' })).toMatch(/not a URL/);
  });

  it('offline, greets and then says back what the user typed', async () => {
    const chat = llm.ChatContext.empty();
    chat.addMessage({ role: 'system', content: 'You are a friendly assistant.' });
    expect(await reply(chat)).toBe(OFFLINE_GREETING);
    chat.addMessage({ role: 'assistant', content: OFFLINE_GREETING });
    chat.addMessage({ role: 'user', content: 'What is two plus two?' });
    expect(await reply(chat)).toBe('You said: What is two plus two?');
  });
});
