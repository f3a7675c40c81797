// SPDX-License-Identifier: GPL-3.0-or-later
// No command in the docs fetches and runs a package the user did not choose (issue 45): `npx X`
// runs X from the registry wherever X is not installed, and the registry's `visage` is not this
// project. So every `npx` in the docs names what a checkout of this repository installs (its own
// `visage`, or a devDependency: `tsx`), for use in the checkout, and the commands for a project
// of one's own (the README's "In your own project", the packages' READMEs) use no `npx` at all.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
  bin: Record<string, string>;
  devDependencies: Record<string, string>;
};
const DOCS = [
  'README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync('examples').flatMap((d) =>
    readdirSync(`examples/${d}`).includes('README.md') ? [`examples/${d}/README.md`] : [],
  ),
];
const OWN_PROJECT = [
  ...readdirSync('packages').map((d) => `packages/${d}/README.md`),
  // The README's section for a project of one's own, up to the next section.
  /^### In your own project\n[\s\S]*?(?=^##)/m.exec(readFileSync('README.md', 'utf8'))![0],
];

/** The shell commands of a Markdown text: the lines of its ```sh blocks. */
function shellLines(markdown: string): string[] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split('\n'));
}

describe('commands in the docs', () => {
  it('run with npx only what a checkout of this repository installs', () => {
    const local = new Set([...Object.keys(manifest.bin), ...Object.keys(manifest.devDependencies)]);
    const strangers = DOCS.flatMap((file) =>
      shellLines(readFileSync(file, 'utf8')).flatMap((line) =>
        [...line.matchAll(/\bnpx\s+(?:--\S+\s+)*([^\s)]+)/g)]
          .filter((m) => !local.has(m[1]!))
          .map((m) => `${file}: npx ${m[1]} (${line.trim()})`),
      ),
    );
    expect(strangers).toEqual([]);
  });

  it('for a project of your own, run no npx at all', () => {
    const text = OWN_PROJECT.map((f) => (f.endsWith('.md') ? readFileSync(f, 'utf8') : f));
    expect(text.flatMap(shellLines).filter((line) => /\bnpx\s/.test(line))).toEqual([]);
  });
});
