// SPDX-License-Identifier: GPL-3.0-or-later
// The README's agent in a project of its own (issue 45), as a new user makes it: `npm init -y`
// (a CommonJS project), the packed plugin and client installed next to `@livekit/agents`, `tsx`,
// `typescript` and `@types/node` (agentProject.ts: offline, from npm's cache), the README's agent
// written there verbatim (read out of README.md, so the two cannot drift) and run as the README
// runs it against a real `visage dev` (the build, bin/visage.js), until the developer, in the
// playground the banner prints (headless Chromium), sees and hears the avatar's greeting. A second
// project, with `"type": "module"`, does the same. Both are type checked as the README says:
// `module: nodenext`, and the defaults `tsc --init` writes.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { buildCli } from '../cli/cliProcess.js';
import {
  agentSays,
  openPlayground,
  receivedAudioEnergy,
  receivedVideo,
  videoPlaying,
} from '../cli/playgroundBrowser.js';
import { until } from '../plugin/agentHarness.js';
import { copyTemplate } from '../server/templateDatabase.js';
import { describeWebRtc } from '../support/network.js';
import { installProject, npm, packWorkspaces, type Packed } from './agentProject.js';

const run = promisify(execFile);
const REPO = resolve('.');
const README = readFileSync(join(REPO, 'README.md'), 'utf8');
/** The README's agent: the first TypeScript block of its "An agent with a face" section. */
const AGENT = /^## An agent with a face\n[\s\S]*?```ts\n([\s\S]*?)```/m.exec(README)![1]!;
const GREETING = /session\.say\('([^']+)'\)/.exec(AGENT)![1]!;
/** What a user installs besides the two tarballs (README: "In your own project"). */
const FROM_REGISTRY = ['@livekit/agents', 'tsx', 'typescript', '@types/node'];
const KINDS = ['commonjs', 'module'] as const;
type Kind = (typeof KINDS)[number];

/** A project as `npm init -y` (and, for an ES module project, `npm pkg set`) makes it. */
async function makeProject(scratch: string, kind: Kind, packed: Packed[]): Promise<string> {
  const dir = join(scratch, `my-agent-${kind}`);
  mkdirSync(dir);
  await npm(['init', '-y'], dir);
  if (kind === 'module') await npm(['pkg', 'set', 'type=module'], dir);
  const fields = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    name: string;
    type?: string;
  };
  expect(fields.type ?? 'commonjs', 'what npm init -y made').toBe(kind);
  for (const p of packed) copyFileSync(join(scratch, p.filename), join(dir, p.filename));
  await installProject(REPO, dir, FROM_REGISTRY, packed, fields);
  writeFileSync(join(dir, 'agent.ts'), AGENT);
  return dir;
}

/** tsc's diagnostics (empty when it passes), run in `dir` with `args`. */
async function tsc(dir: string, args: string[]): Promise<string> {
  const bin = join(dir, 'node_modules/typescript/bin/tsc');
  return run(process.execPath, [bin, ...args], { cwd: dir, timeout: 180_000 }).then(
    () => '',
    (e: { stdout?: string }) => e.stdout || String(e),
  );
}

/** The agent as the README runs it (`node --import tsx agent.ts dev`), in its own group. */
function startAgent(dir: string, env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'agent.ts', 'dev'], {
    cwd: dir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  child.stderr!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  return {
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 8_000);
        await exited;
        clearTimeout(timer);
      }
      try {
        process.kill(-child.pid!, 'SIGKILL'); // its job processes
      } catch {
        // nothing left in its group
      }
    },
  };
}

/**
 * `visage dev` (the build) for the whole file: cliProcess.ts's startCli ends its processes after
 * each test. Answers what it printed once ready.
 */
async function startDev(dataDir: string): Promise<{ child: ChildProcess; banner: string }> {
  const child = spawn(
    process.execPath,
    ['bin/visage.js', 'dev', '--port', '0', '--livekit-port', '0', '--data-dir', dataDir],
    {
      cwd: REPO,
      env: { ...process.env, VISAGE_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await until(() => /Press Ctrl-C/.test(out) || child.exitCode !== null, 300_000, 'visage dev');
  if (child.exitCode !== null) throw new Error(`visage dev exited: ${out}`);
  return { child, banner: out };
}

describeWebRtc("the README's agent in a new project, against `visage dev`", () => {
  let scratch: string;
  const projects = {} as Record<Kind, string>;
  let dev: ChildProcess | undefined;
  let env: Record<string, string>;
  let playgroundUrl: string;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'visage-readme-agent-'));
    const dataDir = copyTemplate(inject('dbTemplate'));
    // The packages are built and packed first: their build cleans their dist/, which the
    // service's build imports (`visage dev` started meanwhile once failed a whole run with
    // "Cannot find module …/@visage-avatar/client/dist/api.js"). Then `visage dev` starts (its
    // avatars drawn, its TTS warmed) while npm installs the two projects (mostly unpacking from
    // npm's cache), and the two installs run side by side.
    const packed = await packWorkspaces(REPO, scratch);
    const [starting, making] = await Promise.allSettled([
      buildCli()
        .then(() => startDev(dataDir))
        .then((started) => ((dev = started.child), started)),
      Promise.all(KINDS.map((kind) => makeProject(scratch, kind, packed))),
    ]);
    if (making.status === 'rejected') throw making.reason;
    if (starting.status === 'rejected') throw starting.reason;
    KINDS.forEach((kind, i) => (projects[kind] = making.value[i]!));
    const banner = starting.value.banner;
    // The LiveKit credentials as the README has the user take them (the port is this run's).
    const { stdout } = await run(
      process.execPath,
      ['bin/visage.js', 'dev', '--print-livekit-credentials', '--data-dir', dataDir],
      { cwd: REPO },
    );
    const printed = Object.fromEntries(
      stdout
        .trim()
        .split('\n')
        .map((l) => l.split('=', 2)),
    );
    playgroundUrl = /Playground:\s+(http:\/\/\S+)\/playground/.exec(banner)![1]!;
    env = {
      LIVEKIT_URL: /ws:\/\/[\d.]+:\d+/.exec(banner)![0],
      LIVEKIT_API_KEY: printed.LIVEKIT_API_KEY!,
      LIVEKIT_API_SECRET: printed.LIVEKIT_API_SECRET!,
      VISAGE_API_KEY: /sk_[0-9A-Za-z]{40}/.exec(banner)![0],
      VISAGE_API_URL: /API:\s+(http:\/\/\S+)/.exec(banner)![1]!,
    };
  }, 1_500_000); // it may wait for another test file's build of the packages

  afterAll(async () => {
    dev?.kill('SIGKILL');
    // Two projects of over 200 MB each: on a busy machine, longer than a hook's default minute.
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }, 300_000);

  for (const kind of KINDS) {
    it(`runs in a ${kind} project until the avatar greets the developer in the playground`, async () => {
      const agent = startAgent(projects[kind], env);
      let playground: Awaited<ReturnType<typeof openPlayground>> | undefined;
      try {
        await until(
          () => agent.output().includes('registered worker'),
          120_000,
          'registration',
        ).catch((err: unknown) => {
          throw new Error(`${String(err)}\n--- agent ---\n${agent.output()}`);
        });
        // The page the banner prints; joining creates a room, which dispatches the agent into it.
        playground = await openPlayground(playgroundUrl, [
          env.LIVEKIT_API_SECRET!,
          env.VISAGE_API_KEY!,
        ]);
        const { page } = playground;
        const shown = playground;
        const failure = async (what: string) =>
          new Error(
            `${what}\n--- agent ---\n${agent.output().slice(-6000)}\n` +
              `--- page console ---\n${shown.console().slice(-3000)}\n` +
              `--- received video ---\n${await receivedVideo(page)}`,
          );
        await agentSays(page, GREETING, 120_000, (seen) =>
          failure(`no whole greeting; saw ${seen.join(' | ')}`),
        );
        await videoPlaying(page, 25, 60_000).catch(async () => {
          throw await failure('the avatar video did not play');
        });
        expect(await receivedAudioEnergy(page), 'the avatar was heard').toBeGreaterThan(0);
        expect(playground.served.filter((s) => s.startsWith('SECRET'))).toEqual([]);
        // The warnings the plugin's own choices used to cause (docs/plugin.md).
        expect(agent.output()).not.toMatch(
          /audio output does not support pause|RoomIO audio output is enabled/,
        );
      } finally {
        await playground?.close().catch(() => undefined);
        await agent.stop();
      }
    }, 300_000);

    it(`type checks in a ${kind} project with module nodenext and with tsc --init's defaults`, async () => {
      const dir = projects[kind];
      writeFileSync(
        join(dir, 'tsconfig.nodenext.json'),
        JSON.stringify({
          compilerOptions: { module: 'nodenext', strict: true, noEmit: true, skipLibCheck: true },
          files: ['agent.ts'],
        }),
      );
      expect(await tsc(dir, ['-p', 'tsconfig.nodenext.json'])).toBe('');

      await tsc(dir, ['--init']);
      if (kind === 'module') {
        expect(await tsc(dir, ['-p', '.', '--noEmit'])).toBe('');
        return;
      }
      // As the README says: under verbatimModuleSyntax a CommonJS .ts file may not `import`...
      expect(await tsc(dir, ['-p', '.', '--noEmit'])).toMatch(/^agent\.ts\(1,\d+\): error TS1295/);
      // ...and the same code as agent.mts passes.
      rmSync(join(dir, 'agent.ts'));
      writeFileSync(join(dir, 'agent.mts'), AGENT);
      expect(await tsc(dir, ['-p', '.', '--noEmit'])).toBe('');
    }, 300_000);
  }
});
