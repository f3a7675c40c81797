// SPDX-License-Identifier: GPL-3.0-or-later
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { prepareAvatarCached } from '../../src/media/render/atlasCache.js';
import { releaseLock, takeLock } from './oncePerRun.js';

/**
 * The catalogue avatars' atlases, drawn once per test run by the real renderer and stored with
 * the real atlas cache (atlasCache.ts: keyed by the renderer's code, checked on load) in the
 * run's scratch folder (scratchRoot.ts), so that a test file that renders a face loads them in
 * milliseconds instead of drawing them again (seconds each on a busy 2-core machine). The first
 * file to need one draws it; another that needs it meanwhile waits for it (a lock folder) rather
 * than drawing it a second time on the same two cores.
 *
 * For files that render with the atlas; a file that tests the drawing itself (faceRenderer's
 * build, atlasCache, sharedAtlas) draws its own.
 */
export async function loadCatalogueAtlases(
  avatarIds: readonly string[] = AVATAR_CATALOGUE.map((a) => a.avatarId),
): Promise<void> {
  const dir = catalogueAtlasDir();
  mkdirSync(dir, { recursive: true });
  for (const id of avatarIds) {
    const lock = join(dir, `${id}.lock`);
    await takeLock(lock);
    try {
      const outcome = await prepareAvatarCached(id, dir);
      if (outcome.storeError) throw new Error(`atlas of ${id} not stored: ${outcome.storeError}`);
    } finally {
      releaseLock(lock);
    }
  }
}

/**
 * Where the run keeps the catalogue's atlases for the renderer `of` the sources (this process:
 * loadCatalogueAtlases stores them there) or of the build (media processes run dist/): a media
 * core given it as its cache directory (`cacheDir`) loads them from there instead of drawing them
 * at its start. Apart, because the cache's key hashes the renderer's own files, which differ
 * between the two, and a cache removes the files of other keys (atlasCache.ts, removeStale).
 */
export function catalogueAtlasDir(of: 'sources' | 'build' = 'sources'): string {
  return join(
    process.env.VISAGE_TEST_SCRATCH ?? tmpdir(),
    of === 'build' ? 'atlases-build' : 'atlases',
  );
}
