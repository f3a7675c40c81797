// SPDX-License-Identifier: GPL-3.0-or-later
// @visage-avatar/web's atlas decoding and composition against the server's renderer: from the
// atlas file the service hands out, the browser package composes the very frames the server
// draws for the same face (byte for byte in I420), converts them to the colours the server's
// conversion gives, and refuses files that are damaged or not atlases.
import { describe, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { encodeAtlasFile } from '../../src/media/render/atlasFile.js';
import { i420ToRgb, renderStill } from '../../src/media/render/index.js';
import { shareAvatarAtlas, unpackAtlas } from '../../src/media/render/sharedAtlas.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  decodeAtlas,
  FaceComposer,
  fetchAtlas,
  i420ToRgba,
  MAX_ATLAS_BYTES,
} from '../../packages/web/src/index.js';

const AVATAR = AVATAR_CATALOGUE[0]!;

/** The avatar's atlas file as the service serves it, in an ArrayBuffer of its own. */
function atlasFile(): { file: ArrayBuffer; server: ReturnType<typeof unpackAtlas> } {
  const shared = shareAvatarAtlas(AVATAR.avatarId);
  const bytes = encodeAtlasFile(shared, { format: 'visage-atlas-3' });
  const file = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(file).set(bytes);
  return { file, server: unpackAtlas(shared) };
}

describe('@visage-avatar/web atlas', () => {
  const { file, server } = atlasFile();

  it('composes the frames the server renders, for every part of the face', async () => {
    const atlas = await decodeAtlas(file, { verify: true });
    expect(atlas.avatarId).toBe(AVATAR.avatarId);
    expect(atlas.mouthRegion).toEqual(server.mouthRegion);
    const composer = new FaceComposer(atlas);
    const poses = [
      { viseme: 'rest', open: 0, lid: 0, gaze: 'center', sway: 0, lift: 0 },
      { viseme: 'AA', open: 1, lid: 0, gaze: 'left', sway: -1, lift: 1 },
      { viseme: 'MBP', open: 0.4, lid: 1, gaze: 'down', sway: 1, lift: 3 },
      { viseme: 'O', open: 0.6, lid: 0.55, gaze: 'right-raised', sway: 0, lift: 2 },
      { viseme: 'E', open: 0.2, lid: 0.2, gaze: 'center-raised', sway: 1, lift: 0 },
    ] as const;
    for (const pose of poses) {
      expect(composer.compose(pose)).toBe(true);
      const expected = renderStill(server, {
        breath: pose.lift,
        sway: pose.sway,
        lid: pose.lid,
        gaze: pose.gaze,
        mouth: { viseme: pose.viseme, openness: pose.open },
      });
      expect(Buffer.compare(Buffer.from(composer.i420), Buffer.from(expected))).toBe(0);
    }
    // The same face again is not composed again.
    expect(composer.compose(poses.at(-1)!)).toBe(false);
    // An open mouth differs from the rest mouth; the rest frame differs from the open one.
    composer.compose(poses[0]);
    const rest = composer.i420.slice();
    composer.compose({ ...poses[0], viseme: 'AA', open: 1 });
    expect(Buffer.compare(Buffer.from(rest), Buffer.from(composer.i420))).not.toBe(0);
  });

  it('converts I420 to the colours of the server’s conversion (BT.601, limited range)', async () => {
    const atlas = await decodeAtlas(file);
    const frame = atlas.poses[1]!;
    const rgba = new Uint8ClampedArray(512 * 512 * 4);
    i420ToRgba(frame, 512, 512, rgba);
    const rgb = i420ToRgb({ width: 512, height: 512, data: frame });
    let worst = 0;
    let translucent = 0;
    for (let p = 0; p < 512 * 512; p++) {
      for (let c = 0; c < 3; c++) {
        worst = Math.max(worst, Math.abs(rgba[p * 4 + c]! - rgb[p * 3 + c]!));
      }
      if (rgba[p * 4 + 3] !== 255) translucent++;
    }
    expect(worst).toBeLessThanOrEqual(1);
    expect(translucent).toBe(0);
  });

  it('refuses files that are not atlases, damaged, or laid out outside their payload', async () => {
    const copy = (edit: (bytes: Uint8Array, header: Record<string, unknown>) => void) => {
      const bytes = new Uint8Array(file.slice(0));
      const length = new DataView(bytes.buffer).getUint32(8, true);
      const header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + length)));
      edit(bytes, header);
      return bytes.buffer;
    };
    await expect(decodeAtlas(new ArrayBuffer(4))).rejects.toThrow('not a Visage atlas');
    await expect(decodeAtlas(file.slice(0, file.byteLength - 8))).rejects.toThrow('truncated');
    // One payload byte changed: the checksum says so.
    const flipped = copy((b) => b.set([b.at(-1)! ^ 1], b.length - 1));
    await expect(decodeAtlas(flipped, { verify: true })).rejects.toThrow('checksum');
    // A header whose layout points past the payload (same length, so it still parses).
    const reLayout = (mutate: (layout: Record<string, unknown>) => void) =>
      copy((bytes, header) => {
        mutate(header.layout as Record<string, unknown>);
        delete header.sha256; // room for longer numbers in the same header length
        const length = new DataView(bytes.buffer).getUint32(8, true);
        const json = new TextEncoder().encode(JSON.stringify(header));
        expect(json.length).toBeLessThanOrEqual(length);
        bytes.fill(0x20, 12, 12 + length);
        bytes.set(json, 12);
      });
    const outside = reLayout((l) => {
      const poses = l.poses as [number, number][];
      poses[0] = [1e9, poses[0]![1]];
    });
    await expect(decodeAtlas(outside)).rejects.toThrow('does not fit');
    const fewerMouths = reLayout((l) => {
      (l.mouths as { sprites: unknown[] }).sprites.pop();
    });
    await expect(decodeAtlas(fewerMouths)).rejects.toThrow('another shape');
  });

  it('fetches an atlas over HTTP, and refuses one larger than the bound or an error', async () => {
    const body = new Uint8Array(file);
    const server = createServer((req, res) => {
      if (req.url === '/atlas') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(body);
      } else if (req.url === '/huge') {
        // Says it is larger than the bound: refused before its body is read.
        res.writeHead(200, { 'content-length': String(MAX_ATLAS_BYTES + 1) });
        res.write(body.subarray(0, 1024));
      } else {
        res.writeHead(403).end('{"error":{"code":"invalid_signature"}}');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await fetchAtlas(`${base}/atlas`)).avatarId).toBe(AVATAR.avatarId);
      await expect(fetchAtlas(`${base}/huge`)).rejects.toThrow('too large');
      await expect(fetchAtlas(`${base}/expired`)).rejects.toThrow('HTTP 403');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
