// SPDX-License-Identifier: GPL-3.0-or-later
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';

/**
 * The code of a thread or child process this process starts (an audio or photo thread, a media
 * process): its TypeScript source (tests, tsx) or its entry in the tsup build.
 */
export interface ChildScript {
  path: string;
  /** The TypeScript source: the thread or process must register tsx before loading it. */
  fromSource: boolean;
}

/**
 * Where a thread's or child process's code is, seen from the module that starts it (`caller`: its
 * `import.meta.url`): `source` beside that module when it runs from the TypeScript sources, else
 * the build's entry `<folder>/<entry>.js`, `media/` unless told (tsup puts shared chunks at the
 * root of dist/ and entries under their names, so the entry is one or two levels up from the
 * caller).
 *
 * `from: 'build'` takes the build's entry even when the caller runs from the sources (tests,
 * which build dist/ once per run): a thread or process started through tsx first transpiles the
 * whole graph it imports (a media process 2 to 4 CPU-s, a thread 0.5 to 1). From the sources the
 * build is the repository's dist/; it must be there.
 */
export function childScript(
  caller: string,
  source: string,
  entry: string,
  from: 'caller' | 'build' = 'caller',
  folder: 'media' | 'server' = 'media',
): ChildScript {
  const fromSources = caller.endsWith('.ts');
  if (fromSources && from === 'caller') {
    return { path: fileURLToPath(new URL(source, caller)), fromSource: true };
  }
  const candidates = fromSources
    ? [new URL(`../../dist/${folder}/${entry}.js`, import.meta.url)]
    : [new URL(`./${folder}/${entry}.js`, caller), new URL(`../${folder}/${entry}.js`, caller)];
  for (const url of candidates) {
    const path = fileURLToPath(url);
    if (existsSync(path)) return { path, fromSource: false };
  }
  throw new Error(`the script ${entry} is missing from the build (dist/${folder}/${entry}.js)`);
}

/**
 * A worker thread running `script` (given `workerData`); from the sources, tsx is registered in
 * the thread first.
 */
export function startWorkerThread(
  script: ChildScript,
  resourceLimits: ResourceLimits,
  workerData?: unknown,
): Worker {
  if (!script.fromSource) return new Worker(script.path, { resourceLimits, workerData });
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const url = JSON.stringify(pathToFileURL(script.path).href);
  return new Worker(
    `import(${tsx}).then(({ register }) => { register(); return import(${url}); });`,
    { eval: true, resourceLimits, workerData },
  );
}

/** The node flags a child process needs to run `script` (tsx's loader for the sources). */
export const childExecArgv = (script: ChildScript): string[] =>
  script.fromSource ? ['--import', 'tsx'] : [];
