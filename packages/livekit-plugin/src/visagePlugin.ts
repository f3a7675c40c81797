// SPDX-License-Identifier: Apache-2.0
import { Plugin } from '@livekit/agents';
import { VERSION } from './version.js';

/** Registers Visage with the agents framework, as every agents-js plugin does on import. */
export class VisagePlugin extends Plugin {
  constructor() {
    super({ title: 'visage', version: VERSION, package: '@visage-avatar/livekit-plugin' });
  }
}

let registered = false;

/** Idempotent: the entry may be imported through several paths. */
export function registerVisagePlugin(): void {
  if (registered) return;
  registered = true;
  Plugin.registerPlugin(new VisagePlugin());
}
