// SPDX-License-Identifier: GPL-3.0-or-later
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildPhotoAvatar,
  decodePhotoBuild,
  type PhotoBuildOutput,
} from '../../src/media/photo/index.js';
import type { PhotoThreadPool } from '../../src/media/photo/photoThreadPool.js';
import { unpackAtlas, type AvatarAtlas } from '../../src/media/render/index.js';
import { storedOncePerRun } from './oncePerRun.js';

/**
 * A photo avatar built once per test run, however many test files build the same portrait: the
 * photo files (lipClosure, mouthUpClose, photoMouth, ...) build the labelled portraits through
 * the real build (buildPhotoAvatar, on the photo threads), 4 to 8 s each on a quiet machine, and
 * several build the same ones. The first file to ask builds it and stores the build's output in
 * the run's scratch folder (scratchRoot.ts); a file that asks meanwhile waits on its lock, and
 * later ones read it. What a test measures is the built atlas, the same bytes either way.
 *
 * The key is the photo's bytes and the build's own code (src/media/photo and src/media/render,
 * hashed): the scratch folder goes with its run, and the code cannot change within one, but a
 * scratch folder kept across runs would still never hand out a build of other code. Outside a
 * run's scratch folder (another runner) it simply builds.
 */

export interface BuiltPortrait {
  output: PhotoBuildOutput;
  /** The id the build was made with (from the key): what decodePhotoBuild checks. */
  atlasId: string;
}

let codeVersion: string | undefined;

/** A hash of the sources the build runs (the photo build and the atlas it renders). */
function buildCodeVersion(): string {
  if (codeVersion) return codeVersion;
  const hash = createHash('sha256');
  for (const folder of ['photo', 'render']) {
    const dir = fileURLToPath(new URL(`../../src/media/${folder}`, import.meta.url));
    const files = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name))
      .sort();
    for (const file of files) hash.update(file.slice(dir.length)).update(readFileSync(file));
  }
  codeVersion = hash.digest('hex').slice(0, 16);
  return codeVersion;
}

/** The build of `bytes` (the real build), made once per run. */
export async function builtPortrait(
  bytes: Uint8Array,
  options: { pool?: PhotoThreadPool } = {},
): Promise<BuiltPortrait> {
  const key = createHash('sha256').update(bytes).update(buildCodeVersion()).digest('hex');
  const atlasId = `portrait-${key.slice(0, 16)}`;
  const build = async () => ({
    output: await buildPhotoAvatar(bytes, { atlasId, pool: options.pool }),
    atlasId,
  });
  return storedOncePerRun('portraits', key, build);
}

/** The portrait's atlas, ready to render (built once per run, see builtPortrait). */
export async function portraitAtlas(
  bytes: Uint8Array,
  options: { pool?: PhotoThreadPool } = {},
): Promise<{ atlas: AvatarAtlas; output: PhotoBuildOutput }> {
  const { output, atlasId } = await builtPortrait(bytes, options);
  return { atlas: unpackAtlas(decodePhotoBuild(output.build, atlasId)), output };
}
