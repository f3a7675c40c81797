// SPDX-License-Identifier: GPL-3.0-or-later
import type { MediaAssets } from '../mediaCore.js';
import { unpackAtlas, type AvatarAtlas } from '../render/index.js';
import { decodePhotoBuild } from './photoBuild.js';

interface Entry {
  atlas: Promise<AvatarAtlas>;
  users: number;
  /** When the last user let go (for evicting the longest unused first). */
  idleSince: number;
}

/**
 * Decoded photo atlases by build id, shared by every session that shows the same photo (one
 * copy, 10-15 MB, however many sessions): counted while in use, and the few most recently
 * released kept for the next session (`keepUnused`).
 */
export class PhotoAtlasCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly assets: MediaAssets,
    private readonly keepUnused = 4,
  ) {}

  /** The atlas of `buildId`, loaded once; call `release` when the session ends. */
  async acquire(buildId: string): Promise<{ atlas: AvatarAtlas; release: () => void }> {
    let entry = this.entries.get(buildId);
    if (!entry) {
      const loading = this.assets
        .get(buildId)
        .then((bytes) => unpackAtlas(decodePhotoBuild(bytes, buildId)));
      entry = { atlas: loading, users: 0, idleSince: 0 };
      this.entries.set(buildId, entry);
      loading.catch(() => {
        if (this.entries.get(buildId) === entry) this.entries.delete(buildId);
      });
    }
    entry.users++;
    const held = entry;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      held.users--;
      if (held.users === 0) {
        held.idleSince = performance.now();
        this.evict();
      }
    };
    try {
      return { atlas: await held.atlas, release };
    } catch (err) {
      release();
      throw err;
    }
  }

  /** Build ids loaded now, with how many sessions use each. */
  loaded(): Map<string, number> {
    return new Map([...this.entries].map(([id, e]) => [id, e.users]));
  }

  private evict(): void {
    const unused = [...this.entries].filter(([, e]) => e.users === 0);
    unused.sort((a, b) => a[1].idleSince - b[1].idleSince);
    while (unused.length > this.keepUnused) this.entries.delete(unused.shift()![0]);
  }
}
