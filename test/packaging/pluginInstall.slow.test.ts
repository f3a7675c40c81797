// SPDX-License-Identifier: GPL-3.0-or-later
// What an agent developer installs (issue 32): the LiveKit Agents plugin and the client are
// packed as they would be published, installed into an empty agent project next to
// `@livekit/agents` (agentProject.ts), and then weighed, imported (from an ES module and from
// CommonJS) and type checked there. The plugin must add well under 20 MB besides
// `@livekit/agents` (the whole service was 875 MB): a heavy dependency added to the plugin or the
// client fails this test.
import { execFile } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installProject, type Packed, packWorkspaces, WORKSPACES } from './agentProject.js';
import { closure, type LockPackages } from './lockTree.js';

const run = promisify(execFile);
const REPO = resolve('.');
const CLIENT = '@visage-avatar/client';
const PLUGIN = '@visage-avatar/livekit-plugin';
const AGENTS = '@livekit/agents';
const LIMIT_BYTES = 20 * 1024 * 1024;
const MB = 1024 * 1024;

/** Bytes of the files of the package at `dir`, its own node_modules left out. */
function packageBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') total += packageBytes(path);
    } else total += lstatSync(path).size;
  }
  return total;
}

const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;

describe('installing the plugin into an agent project', () => {
  let scratch: string;
  let packed: Packed[];
  let installed: LockPackages;
  const seconds: Record<string, number> = {};

  async function timed<T>(step: string, work: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await work();
    } finally {
      seconds[step] = Math.round((performance.now() - start) / 100) / 10;
    }
  }

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'visage-agent-project-'));
    // Built as `npm pack` builds them (their prepack), then packed as they would be published.
    packed = await timed('pack', () => packWorkspaces(REPO, scratch));
    const manifest = await timed('install', () => installProject(REPO, scratch, [AGENTS], packed));
    // What npm really installed there (its hidden lockfile), not what was asked for.
    installed = (
      JSON.parse(readFileSync(join(scratch, 'node_modules/.package-lock.json'), 'utf8')) as {
        packages: LockPackages;
      }
    ).packages;
    installed[''] = { dependencies: manifest.dependencies };
  }, 900_000); // it may wait for another test file's build of the packages

  afterAll(async () => {
    console.log(`plugin install test: ${JSON.stringify(seconds)} s`);
    // Over 200 MB of node_modules: on a busy machine, longer than a hook's default minute.
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }, 300_000);

  it('packs the built code, declarations, README and licence, and no sources', () => {
    for (const p of packed) {
      expect(p.files, p.name).toEqual(
        expect.arrayContaining([
          'package.json',
          'README.md',
          'LICENSE',
          'dist/index.js',
          'dist/index.d.ts',
          'dist/index.cjs',
          'dist/index.d.cts',
        ]),
      );
      expect(
        p.files.filter(
          (f) => !f.startsWith('dist/') && !['package.json', 'README.md', 'LICENSE'].includes(f),
        ),
        p.name,
      ).toEqual([]);
    }
    expect(packed.map((p) => p.name).sort()).toEqual([CLIENT, PLUGIN]);
  });

  it('adds well under 20 MB besides @livekit/agents', () => {
    const onDisk = (at: string) =>
      lstatSync(join(scratch, at), { throwIfNoEntry: false }) !== undefined;
    const bytes = (at: string) => packageBytes(join(scratch, at));
    const sum = (locations: Iterable<string>) =>
      [...locations].filter(onDisk).reduce((total, at) => total + bytes(at), 0);
    const agentsSide = closure(installed, [`node_modules/${AGENTS}`]);
    // The plugin, the client and their dependencies; the plugin's peers are the agent's own.
    const plugin = installed[`node_modules/${PLUGIN}`]!;
    const pluginSide = new Set([
      `node_modules/${PLUGIN}`,
      ...closure(
        installed,
        Object.keys(plugin.dependencies ?? {}).map((name) => `node_modules/${name}`),
      ),
    ]);
    const added = [...pluginSide].filter((at) => !agentsSide.has(at) && onDisk(at));
    const shared = [...pluginSide].filter((at) => agentsSide.has(at));

    const named = (locations: string[]) =>
      locations
        .map((at) => [at.replace(/^node_modules\//, ''), bytes(at)] as const)
        .sort((a, b) => b[1] - a[1])
        .map(([name, size]) => `${name} ${mb(size)}`)
        .join(', ');
    console.log(
      `The plugin adds ${mb(sum(added))} to an agent project: ${named(added)}. ` +
        `It also uses ${mb(sum(shared))} that @livekit/agents installs anyway: ${named(shared.filter(onDisk))}. ` +
        `@livekit/agents and its tree: ${mb(sum(agentsSide))}.`,
    );
    expect(added).toEqual(
      expect.arrayContaining([`node_modules/${PLUGIN}`, `node_modules/${CLIENT}`]),
    );
    expect(sum(added), `the plugin adds ${named(added)}`).toBeLessThan(LIMIT_BYTES);
  });

  // An ES module and a CommonJS program (what a project `npm init` made runs) load the same
  // packages, with the client loaded once (one error hierarchy) and the plugin registered.
  const loaders = {
    module: (name: string, from: string) => `import { ${name} } from '${from}';`,
    commonjs: (name: string, from: string) => `const { ${name} } = require('${from}');`,
  };
  for (const [kind, load] of Object.entries(loaders)) {
    it(`loads AvatarSession and the client as ${kind === 'module' ? 'an ES module' : 'CommonJS'}, with the client installed once`, async () => {
      const program = `
        ${load('Plugin', '@livekit/agents')}
        ${load('AvatarSession, VisageException', PLUGIN)}
        ${load('VisageClient, VisageError', CLIENT)}
        ${load('CHAT_TOPIC', `${CLIENT}/api`)}
        console.log(JSON.stringify({
          avatarSession: typeof AvatarSession,
          oneErrorHierarchy: new VisageException('x') instanceof VisageError,
          client: new VisageClient({ apiKey: 'sk_test', baseUrl: 'http://127.0.0.1:9' }).baseUrl,
          chatTopic: CHAT_TOPIC,
          registered: Plugin.registeredPlugins.map((p) => p.package + '@' + p.version),
        }));`;
      const { stdout } = await run(process.execPath, [`--input-type=${kind}`, '-e', program], {
        cwd: scratch,
        timeout: 60_000,
      });
      const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
      const version = packed.find((p) => p.name === PLUGIN)!.version;
      expect(seen).toEqual({
        avatarSession: 'function',
        oneErrorHierarchy: true,
        client: 'http://127.0.0.1:9',
        chatTopic: 'lk.chat',
        registered: expect.arrayContaining([`${PLUGIN}@${version}`]),
      });
    }, 120_000);
  }

  it("type checks an agent's code and the packages' README examples against the installed declarations", async () => {
    // The examples as a user copies them out of the READMEs.
    const examples = WORKSPACES.map((dir) => {
      const file = `${dir.replace('packages/', '')}-readme.ts`;
      const readme = readFileSync(join(dir, 'README.md'), 'utf8');
      writeFileSync(join(scratch, file), /```ts\n([\s\S]*?)```/.exec(readme)![1]!);
      return file;
    });
    const agent = `import { AvatarSession, type AvatarSessionOptions, VisageException } from '${PLUGIN}';
import { VisageClient, type VisageError } from '${CLIENT}';
import type { Session } from '${CLIENT}/api';

type IsAny<T> = 0 extends 1 & T ? true : false;
const options: AvatarSessionOptions = { avatarId: 'avt_x', voiceId: 'voice_x' };
const avatar = new AvatarSession(options);
export const session: Session | undefined = avatar.session;
export const sessionIsTyped: IsAny<typeof avatar.session> = false;
export const error: VisageError = new VisageException('x');
export const client = new VisageClient({ apiKey: 'sk_test' });
`;
    // The same code as an ES module and as CommonJS (.cts: its imports become require(), which
    // reads the .d.cts declarations).
    writeFileSync(join(scratch, 'agent.ts'), agent);
    writeFileSync(join(scratch, 'agent-commonjs.cts'), agent);
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: true,
          noEmit: true,
          typeRoots: [join(REPO, 'node_modules/@types')],
          types: ['node'],
        },
        files: ['agent.ts', 'agent-commonjs.cts', ...examples],
      }),
    );
    const tsc = join(REPO, 'node_modules/typescript/bin/tsc');
    const result = await timed('typecheck', () =>
      run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: scratch, timeout: 120_000 }).then(
        () => '',
        (e: { stdout?: string }) => e.stdout ?? String(e),
      ),
    );
    expect(result).toBe('');
  }, 180_000);
});
