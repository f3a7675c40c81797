// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Declared duration of an MP4/M4A file from its `moov/mvhd` box, without decoding. The MP4
 * decoder only produces audio once it has the whole file, so this is how a duration limit is
 * enforced before decoding (the decoded length is checked again afterwards, since a file may
 * lie in its header).
 */
function readBox(view: DataView, offset: number, end: number) {
  if (offset + 8 > end) return undefined;
  let size = view.getUint32(offset);
  const type = String.fromCharCode(
    view.getUint8(offset + 4),
    view.getUint8(offset + 5),
    view.getUint8(offset + 6),
    view.getUint8(offset + 7),
  );
  let header = 8;
  if (size === 1) {
    if (offset + 16 > end) return undefined;
    size = Number(view.getBigUint64(offset + 8));
    header = 16;
  } else if (size === 0) {
    size = end - offset; // box runs to the end of the file
  }
  if (size < header) return undefined;
  return { type, start: offset + header, end: Math.min(end, offset + size) };
}

function findBox(view: DataView, start: number, end: number, type: string) {
  for (let offset = start; offset < end;) {
    const box = readBox(view, offset, end);
    if (!box) return undefined;
    if (box.type === type) return box;
    offset = box.end;
  }
  return undefined;
}

/** Duration in ms declared by the movie header, or undefined when it cannot be read. */
export function mp4DeclaredDurationMs(bytes: Uint8Array): number | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const moov = findBox(view, 0, bytes.length, 'moov');
  if (!moov) return undefined;
  const mvhd = findBox(view, moov.start, moov.end, 'mvhd');
  if (!mvhd || mvhd.end - mvhd.start < 32) return undefined;
  const version = view.getUint8(mvhd.start);
  let timescale: number;
  let duration: number;
  if (version === 1) {
    timescale = view.getUint32(mvhd.start + 20);
    duration = Number(view.getBigUint64(mvhd.start + 24));
  } else {
    timescale = view.getUint32(mvhd.start + 12);
    duration = view.getUint32(mvhd.start + 16);
  }
  if (!(timescale > 0)) return undefined;
  return (duration / timescale) * 1000;
}
