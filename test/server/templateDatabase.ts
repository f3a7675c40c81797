// SPDX-License-Identifier: GPL-3.0-or-later
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { Store } from '../../src/server/store/store.js';

/**
 * vitest global setup: initialise one embedded database (4 s the first time) that every test
 * copies (milliseconds) instead of initialising its own. See `freshDataDir`.
 */
export default async function setup(project: TestProject): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'visage-template-'));
  const store = await Store.openEmbedded(dir);
  await store.close();
  project.provide('dbTemplate', dir);
}

declare module 'vitest' {
  export interface ProvidedContext {
    dbTemplate: string;
  }
}

/** Copies the template database into a new data directory. */
export function copyTemplate(template: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'visage-test-'));
  cpSync(join(template, 'db'), join(dir, 'db'), { recursive: true });
  return dir;
}
