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
 * the build's entry `media/<entry>.js` (tsup puts shared chunks at the root of dist/ and entries
 * under their names, so the entry is one or two levels up from the caller).
 */
export function childScript(caller: string, source: string, entry: string): ChildScript {
  if (caller.endsWith('.ts')) {
    return { path: fileURLToPath(new URL(source, caller)), fromSource: true };
  }
  for (const relative of [`./media/${entry}.js`, `../media/${entry}.js`]) {
    const path = fileURLToPath(new URL(relative, caller));
    if (existsSync(path)) return { path, fromSource: false };
  }
  throw new Error(`the script ${entry} is missing from the build (dist/media/${entry}.js)`);
}

/** A worker thread running `script`; from the sources, tsx is registered in the thread first. */
export function startWorkerThread(script: ChildScript, resourceLimits: ResourceLimits): Worker {
  if (!script.fromSource) return new Worker(script.path, { resourceLimits });
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const url = JSON.stringify(pathToFileURL(script.path).href);
  return new Worker(
    `import(${tsx}).then(({ register }) => { register(); return import(${url}); });`,
    { eval: true, resourceLimits },
  );
}

/** The node flags a child process needs to run `script` (tsx's loader for the sources). */
export const childExecArgv = (script: ChildScript): string[] =>
  script.fromSource ? ['--import', 'tsx'] : [];
