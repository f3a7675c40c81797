// SPDX-License-Identifier: GPL-3.0-or-later
import { spawn, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

/**
 * Compressing an atlas for browsers, two ways (figures for a photo atlas, 9.5 MB, on the 2-core
 * development machine; docs/face-stream.md#the-atlas):
 *
 * - **kept**: brotli at quality 9 (1.58 MB, about 4 s of a core) and gzip at level 6 (4.68 MB,
 *   0.7 s; level 9 saves 0.1 % for 60 % more time), in a child process at the lowest priority
 *   (nice 19): it takes only the CPU that live sessions leave, never theirs.
 * - **fast**, for a fetch that comes before the kept files exist: brotli at quality 2 (2.87 MB,
 *   0.17 s) or gzip at level 1 (5.2 MB, 0.2 s), in this process's libuv threads; not kept.
 */

/** The lowest priority: the scheduler gives such a process what no other wants. */
export const BACKGROUND_NICE = 19;

export interface KeptCompression {
  /** The niceness the child ran at, as it read it itself. */
  nice: number;
  brMs: number;
  gzipMs: number;
  brBytes: number;
  gzipBytes: number;
}

/**
 * The child's code: no module of this project, so it runs from the sources and from the build
 * alike. It lowers its own priority first (the parent does too, but only after the spawn), reads
 * the atlas from stdin, writes the two files to the paths it is given, and reports on stdout.
 */
const CHILD_SOURCE = `
const os = require('node:os');
const zlib = require('node:zlib');
const fs = require('node:fs');
try { os.setPriority(0, ${BACKGROUND_NICE}); } catch {}
const [brPath, gzipPath] = process.argv.slice(1);
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const raw = Buffer.concat(chunks);
  let t = performance.now();
  fs.writeFileSync(brPath, zlib.brotliCompressSync(raw, { params: {
    [zlib.constants.BROTLI_PARAM_QUALITY]: 9,
    [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.byteLength,
  } }), { mode: 0o600 });
  const brMs = performance.now() - t;
  t = performance.now();
  fs.writeFileSync(gzipPath, zlib.gzipSync(raw, { level: 6 }), { mode: 0o600 });
  const gzipMs = performance.now() - t;
  const brBytes = fs.statSync(brPath).size;
  const gzipBytes = fs.statSync(gzipPath).size;
  process.stdout.write(JSON.stringify({ nice: os.getPriority(0), brMs, gzipMs, brBytes, gzipBytes }));
});
`;

/** Compressions in children: each is killed by `stopAll` (a node that closes). */
export class BackgroundCompressor {
  private readonly children = new Set<ChildProcess>();
  private stopped = false;

  /** Writes the atlas `raw` compressed to `brPath` and `gzipPath`; rejects if the child fails. */
  compress(raw: Uint8Array, brPath: string, gzipPath: string): Promise<KeptCompression> {
    if (this.stopped) return Promise.reject(new Error('the node is closing'));
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['-e', CHILD_SOURCE, brPath, gzipPath], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      this.children.add(child);
      try {
        if (child.pid !== undefined) setPriority(child.pid, BACKGROUND_NICE);
      } catch {
        // The child lowers its own priority too; a platform that refuses both reports it.
      }
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout!.on('data', (c: Buffer) => out.push(c));
      child.stderr!.on('data', (c: Buffer) => err.length < 64 && err.push(c));
      child.stdin!.on('error', () => undefined); // told by the exit below
      child.on('error', (e) => {
        this.children.delete(child);
        reject(e);
      });
      child.on('close', (code, signal) => {
        this.children.delete(child);
        if (code === 0) {
          try {
            resolve(JSON.parse(Buffer.concat(out).toString('utf8')) as KeptCompression);
            return;
          } catch {
            // Reported below.
          }
        }
        const why = Buffer.concat(err).toString('utf8').slice(0, 2000);
        reject(new Error(`atlas compression exited (${signal ?? code}): ${why}`));
      });
      child.stdin!.end(raw);
    });
  }

  /** Ends the compressions under way; later ones are refused. */
  stopAll(): void {
    this.stopped = true;
    for (const child of this.children) child.kill('SIGKILL');
  }
}

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** The fast compression of a fetch that came before the kept files (see above). */
export function compressFast(raw: Uint8Array, encoding: 'br' | 'gzip'): Promise<Uint8Array> {
  return encoding === 'br'
    ? brotli(raw, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: 2,
          [constants.BROTLI_PARAM_SIZE_HINT]: raw.byteLength,
        },
      })
    : gzipAsync(raw, { level: 1 });
}
