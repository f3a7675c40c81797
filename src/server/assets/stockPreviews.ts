// SPDX-License-Identifier: GPL-3.0-or-later
import { findAvatarByDesign } from '../../media/avatarCatalogue.js';
import { avatarAtlasAsync, i420ToPng, renderStill } from '../../media/render/index.js';

/**
 * Preview PNGs of the stock avatars, drawn on first request from their atlas (built in short
 * steps that leave the event loop free, or the one the media core already holds) and kept.
 */
export class StockPreviews {
  private readonly previews = new Map<string, Promise<Uint8Array>>();

  preview(design: string): Promise<Uint8Array> {
    let png = this.previews.get(design);
    if (!png) {
      png = (async () => {
        const stock = findAvatarByDesign(design);
        if (!stock) throw new Error(`no stock avatar with design ${design}`);
        const atlas = await avatarAtlasAsync(stock.avatarId);
        return new Uint8Array(i420ToPng({ width: 512, height: 512, data: renderStill(atlas) }));
      })();
      png.catch(() => this.previews.delete(design));
      this.previews.set(design, png);
    }
    return png;
  }
}
