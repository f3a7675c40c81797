// SPDX-License-Identifier: GPL-3.0-or-later
// The source tree is layered: a module imports from its own part of the tree and from the layers
// below it, never from above. This test reads every import in src/ (TypeScript's own pre-parser:
// static, dynamic, `export … from`, `import type` alike) and names each one that points up, so the
// layering docs/architecture.md describes is a fact, not a hope.
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve('src');

/**
 * Lowest first. A group is a folder or a file under src/; a module belongs to the longest group
 * that contains it, and may import modules of its own group and of any group in a lower layer.
 */
const LAYERS: readonly (readonly string[])[] = [
  // The wire contract, and process-wide leaves.
  ['api', 'version.ts', 'rtcNodeLog.ts'],
  // The media core's seam and data, and audio decoding.
  [
    'media/mediaCore.ts',
    'media/avatarCatalogue.ts',
    'media/startupProgress.ts',
    'media/childScript.ts',
    'media/audio',
  ],
  ['media/voice', 'media/speech', 'media/lipsync'],
  // Speech engines use the voice analysis, never the other way round.
  ['media/tts', 'media/render', 'media/audioThreads'],
  ['media/photo'],
  ['media/session'],
  ['media/mediaProcesses'],
  ['devserver', 'client'],
  ['server', 'plugin'],
  ['cli', 'index.ts'],
];

/** Groups that import nothing outside themselves (besides packages). */
const STANDS_ALONE = ['devserver'];

const GROUPS = LAYERS.flat();
const layerOf = new Map(LAYERS.flatMap((groups, rank) => groups.map((g) => [g, rank] as const)));

function groupOf(file: string): string | undefined {
  const rel = relative(SRC, file).split('\\').join('/');
  return GROUPS.filter((g) => rel === g || rel.startsWith(`${g}/`)).sort(
    (a, b) => b.length - a.length,
  )[0];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

function importedNames(file: string): string[] {
  return ts
    .preProcessFile(readFileSync(file, 'utf8'), true, true)
    .importedFiles.map((f) => f.fileName);
}

/** Every relative import of `file`, resolved to the source file it names. */
function relativeImports(file: string): string[] {
  return importedNames(file)
    .filter((name) => name.startsWith('.'))
    .map((name) => resolve(dirname(file), name).replace(/\.js$/, '.ts'));
}

/** The npm packages `file` imports (`zod/v4` is `zod`), Node's built-ins left out. */
function packageImports(file: string): string[] {
  return importedNames(file)
    .filter((name) => !name.startsWith('.') && !name.startsWith('node:'))
    .filter((name) => !builtinModules.includes(name))
    .map((name) =>
      name
        .split('/')
        .slice(0, name.startsWith('@') ? 2 : 1)
        .join('/'),
    );
}

/** Why the import of `target` by `file` breaks the layering, or undefined when it does not. */
function breaks(file: string, target: string): string | undefined {
  const from = groupOf(file)!;
  const to = groupOf(target);
  if (!target.startsWith(`${SRC}/`)) return 'outside src/';
  if (to === from) return undefined;
  if (to === undefined) return 'in no layer';
  if (STANDS_ALONE.includes(from)) return `${from} stands alone`;
  return layerOf.get(to)! < layerOf.get(from)! ? undefined : `${to} is not below ${from}`;
}

describe('the layering of src/', () => {
  const files = sourceFiles(SRC);

  it('places every source file in a layer', () => {
    expect(files.filter((f) => groupOf(f) === undefined).map((f) => relative(SRC, f))).toEqual([]);
  });

  it('has no import that points up, or sideways between groups of one layer', () => {
    const found = files.flatMap((file) =>
      relativeImports(file).flatMap((target) => {
        const why = breaks(file, target);
        return why ? [`${relative(SRC, file)} -> ${relative(SRC, target)} (${why})`] : [];
      }),
    );
    // version.ts reads ../package.json: the one import that leaves src/, on purpose.
    expect(found).toEqual(['version.ts -> ../package.json (outside src/)']);
  });

  it('names an upward or sideways import when there is one', () => {
    // The check itself, on imports the tree must never have.
    const at = (path: string) => join(SRC, path);
    expect(breaks(at('media/voice/analyzeVoiceClip.ts'), at('media/tts/espeakEngine.ts'))).toBe(
      'media/tts is not below media/voice',
    );
    expect(breaks(at('api/endpoints.ts'), at('server/http/app.ts'))).toBe(
      'server is not below api',
    );
    expect(breaks(at('client/visageClient.ts'), at('devserver/rtc/room.ts'))).toBe(
      'devserver is not below client',
    );
    expect(breaks(at('devserver/rtc/room.ts'), at('api/ids.ts'))).toBe('devserver stands alone');
    expect(breaks(at('media/tts/espeakEngine.ts'), at('media/voice/measureVoice.ts'))).toBe(
      undefined,
    );
  });
});

/**
 * Inside src/server, the domain (sessions, assets, the store, the cluster, administration)
 * throws its own typed errors (sessions/sessionErrors.ts, assets/assetError.ts); only the HTTP
 * edge (src/server/http) turns them into answers. So nothing of the domain imports the edge.
 */
describe('the server domain and its HTTP edge', () => {
  const DOMAIN = ['sessions', 'assets', 'store', 'cluster', 'admin'];
  const edge = join(SRC, 'server/http');

  it('no module of the domain imports src/server/http', () => {
    const found = DOMAIN.flatMap((folder) => sourceFiles(join(SRC, 'server', folder))).flatMap(
      (file) =>
        relativeImports(file)
          .filter((t) => t.startsWith(`${edge}/`))
          .map((t) => `${relative(SRC, file)} -> ${relative(SRC, t)}`),
    );
    expect(found).toEqual([]);
  });
});

/**
 * src/api + src/client and src/plugin are also published on their own, under a permissive
 * licence and without the service's dependencies: packages/client and packages/livekit-plugin
 * bundle them. So they may import only what those packages hold and declare.
 */
describe('the sources of the published packages', () => {
  const at = (path: string) => join(SRC, path);
  const relativeTo = (paths: string[]) => paths.map((p) => relative(SRC, p));
  const declared = (pkg: string): string[] => {
    const json = JSON.parse(readFileSync(`packages/${pkg}/package.json`, 'utf8')) as {
      dependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
    };
    return [...Object.keys(json.dependencies ?? {}), ...Object.keys(json.peerDependencies ?? {})];
  };
  const clientFiles = [...sourceFiles(at('api')), ...sourceFiles(at('client'))];
  const pluginFiles = sourceFiles(at('plugin'));
  // The plugin's build answers these from the client package, so they must be its entries.
  const CLIENT_ENTRIES = [at('client/index.ts'), at('api/index.ts')];
  // Process-wide leaves the plugin's build bundles (version.ts becomes the plugin's version).
  const PLUGIN_LEAVES = [at('version.ts'), at('rtcNodeLog.ts')];

  it('src/api and src/client import nothing but each other', () => {
    const outside = clientFiles.flatMap((file) =>
      relativeImports(file)
        .filter((t) => !t.startsWith(at('api/')) && !t.startsWith(at('client/')))
        .map((t) => `${relative(SRC, file)} -> ${relative(SRC, t)}`),
    );
    expect(outside).toEqual([]);
  });

  it('src/plugin imports only itself, the entries of src/client and src/api, and two leaves', () => {
    const outside = pluginFiles.flatMap((file) =>
      relativeImports(file)
        .filter((t) => !t.startsWith(at('plugin/')))
        .filter((t) => !CLIENT_ENTRIES.includes(t) && !PLUGIN_LEAVES.includes(t))
        .map((t) => `${relative(SRC, file)} -> ${relative(SRC, t)}`),
    );
    expect(outside).toEqual([]);
  });

  it('the bundled leaves import nothing from src/', () => {
    expect(relativeTo(PLUGIN_LEAVES.flatMap(relativeImports))).toEqual(['../package.json']);
  });

  /** `file -> package` for each package import of `files` that `allowed` does not hold. */
  const undeclaredImports = (files: string[], allowed: string[]): string[] =>
    files.flatMap((file) =>
      packageImports(file)
        .filter((name) => !allowed.includes(name))
        .map((name) => `${relative(SRC, file)} -> ${name}`),
    );

  it("src/api and src/client use only the client package's dependencies", () => {
    expect(undeclaredImports(clientFiles, declared('client'))).toEqual([]);
  });

  it("src/plugin uses only the plugin package's dependencies and peers", () => {
    const files = [...pluginFiles, ...PLUGIN_LEAVES];
    expect(undeclaredImports(files, declared('livekit-plugin'))).toEqual([]);
  });

  it('names a package import that a package does not declare', () => {
    // The check itself, on an import these folders must never have (the service's database).
    expect(
      undeclaredImports([at('server/store/database.ts')], declared('livekit-plugin')),
    ).toContain('server/store/database.ts -> @electric-sql/pglite');
    expect(packageImports(at('api/endpoints.ts'))).toEqual(['zod']);
  });
});
