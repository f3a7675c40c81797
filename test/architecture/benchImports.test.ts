// SPDX-License-Identifier: GPL-3.0-or-later
// `npm run bench` runs each bench file with tsx, outside the test runner: a bench that reaches
// vitest through a test helper fails at its first line ("Vitest failed to access its internal
// state"; issue 34). This test follows every import of every bench file, through src/ and test/
// alike, and names each module on the way that imports the test runner.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const RUNNER = /^(vitest|@vitest\/)/;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

function importedNames(file: string): string[] {
  return ts
    .preProcessFile(readFileSync(file, 'utf8'), true, true)
    .importedFiles.map((f) => f.fileName);
}

/** The source file a relative import names (`./x.js` is `./x.ts`), if it is one of ours. */
function sourceOf(from: string, name: string): string | undefined {
  const path = resolve(dirname(from), name);
  return [path.replace(/\.js$/, '.ts'), path, `${path}.ts`, join(path, 'index.ts')].find(
    (p) => p.endsWith('.ts') && existsSync(p),
  );
}

/** `chain -> runner` for each module reachable from `entry` that imports the test runner. */
export function runnerImports(entry: string): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  const walk = (file: string, chain: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    const here = [...chain, relative('.', file)];
    for (const name of importedNames(file)) {
      if (RUNNER.test(name)) found.push(`${here.join(' -> ')} -> ${name}`);
      else if (name.startsWith('.')) {
        const next = sourceOf(file, name);
        if (next) walk(next, here);
      }
    }
  };
  walk(resolve(entry), []);
  return found;
}

describe('the benchmarks', () => {
  it('import nothing that imports the test runner', () => {
    const benches = tsFiles('bench');
    expect(benches.length).toBeGreaterThan(5);
    expect(benches.flatMap(runnerImports)).toEqual([]);
  });

  it('names the chain to the test runner when there is one', () => {
    // The check itself, on a test helper that imports vitest through another.
    const chains = runnerImports('test/server/testServer.ts');
    expect(chains).toContain('test/server/testServer.ts -> vitest');
  });
});
