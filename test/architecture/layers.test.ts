// SPDX-License-Identifier: GPL-3.0-or-later
// The source tree is layered: a module imports from its own part of the tree and from the layers
// below it, never from above. This test reads every import in src/ (TypeScript's own pre-parser:
// static, dynamic, `export … from`, `import type` alike) and names each one that points up, so the
// layering docs/architecture.md describes is a fact, not a hope. The packages (packages/*/src) are
// held to their own boundary at the end.
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
  // Process-wide leaves: the threads (one pool, and where a thread's or child process's code
  // is) that media and the server's store both run work on. (The wire contract is
  // @visage-avatar/client/api, a package.)
  ['version.ts', 'rtcNodeLog.ts', 'threads'],
  // The media core's seam and data, and audio decoding.
  ['media/mediaCore.ts', 'media/avatarCatalogue.ts', 'media/startupProgress.ts', 'media/audio'],
  ['media/voice', 'media/voiceActivity', 'media/lipsync'],
  // Speech engines use the voice analysis, never the other way round.
  ['media/tts', 'media/render', 'media/audioThreads'],
  ['media/photo'],
  ['media/room'],
  // The media core in worker processes, and one still starting (it wraps either).
  ['media/mediaProcesses', 'media/startingMediaCore.ts'],
  ['devserver', 'client'],
  ['server'],
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
    expect(breaks(at('version.ts'), at('server/http/app.ts'))).toBe(
      'server is not below version.ts',
    );
    expect(breaks(at('client/index.ts'), at('devserver/rtc/room.ts'))).toBe(
      'devserver is not below client',
    );
    expect(breaks(at('devserver/rtc/room.ts'), at('media/mediaCore.ts'))).toBe(
      'devserver stands alone',
    );
    expect(breaks(at('server/http/app.ts'), join(SRC, '../packages/client/src/api/ids.ts'))).toBe(
      'outside src/',
    );
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
 * packages/client and packages/livekit-plugin are published on their own, under a permissive
 * licence and without the service's dependencies, built from their own src/. So a package's
 * sources import only their own files and what its package.json declares (the plugin declares
 * the client); never the service, which depends on them and not the other way round. The
 * service takes them by package name, through their entries (a relative import out of src/ is
 * "outside src/" above).
 */
describe('the packages and the service', () => {
  const PACKAGES = ['client', 'livekit-plugin', 'web'];
  const root = (pkg: string) => resolve('packages', pkg);
  const declared = (pkg: string): string[] => {
    const json = JSON.parse(readFileSync(join(root(pkg), 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
    };
    return [...Object.keys(json.dependencies ?? {}), ...Object.keys(json.peerDependencies ?? {})];
  };
  const filesOf = (pkg: string) => sourceFiles(join(root(pkg), 'src'));

  /** `file -> package` for each package import of `files` that `allowed` does not hold. */
  const undeclaredImports = (files: string[], allowed: string[]): string[] =>
    files.flatMap((file) =>
      packageImports(file)
        .filter((name) => !allowed.includes(name))
        .map((name) => `${relative('packages', file)} -> ${name}`),
    );

  it.each(PACKAGES)('packages/%s/src imports nothing outside itself', (pkg) => {
    const own = join(root(pkg), 'src');
    const outside = filesOf(pkg).flatMap((file) =>
      relativeImports(file)
        .filter((t) => !t.startsWith(`${own}/`))
        .map((t) => `${relative(own, file)} -> ${relative(own, t)}`),
    );
    // version.ts reads the package's own package.json (its version), on purpose.
    expect(outside).toEqual(pkg === 'livekit-plugin' ? ['version.ts -> ../package.json'] : []);
  });

  it.each(PACKAGES)("packages/%s/src uses only its package's dependencies and peers", (pkg) => {
    expect(undeclaredImports(filesOf(pkg), declared(pkg))).toEqual([]);
  });

  it('names a package import that a package does not declare', () => {
    // The check itself, on imports the packages must never have (the service, its database).
    const service = resolve('src/server/store/databaseThread.ts');
    expect(undeclaredImports([service], declared('livekit-plugin'))).toContain(
      '../src/server/store/databaseThread.ts -> @electric-sql/pglite',
    );
    expect(packageImports(join(root('client'), 'src/api/endpoints.ts'))).toEqual(['zod']);
    expect(declared('client')).not.toContain('visage');
    expect(declared('livekit-plugin')).not.toContain('visage');
  });

  it('the service takes the plugin only in its entry (src/index.ts), which re-exports it', () => {
    const users = sourceFiles(SRC)
      .filter((file) => packageImports(file).includes('@visage-avatar/livekit-plugin'))
      .map((file) => relative(SRC, file));
    expect(users).toEqual(['index.ts']);
  });

  it('the service takes from the browser package only its composition (no browser code)', () => {
    // The playground's page script (src/cli/playground/browser/) is a page: it is bundled for the
    // browser and draws with the whole package. The service's own code takes the composition.
    const page = join(SRC, 'cli/playground/browser');
    const serviceFiles = sourceFiles(SRC).filter((file) => !file.startsWith(page));
    expect(serviceFiles.length).toBeLessThan(sourceFiles(SRC).length);
    const imports = serviceFiles.flatMap((file) =>
      importedNames(file)
        .filter((name) => name.startsWith('@visage-avatar/web'))
        .map((name) => `${relative(SRC, file)} -> ${name}`),
    );
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((line) => !line.endsWith('-> @visage-avatar/web/composition'))).toEqual(
      [],
    );
  });
});
