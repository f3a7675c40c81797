import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Uploaded clips' bytes, one file per id under `<dataDir>/files`; metadata is in the Store. */
export class FileStorage {
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'files');
  }

  async put(id: string, bytes: Uint8Array): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = join(this.dir, `.${id}.tmp`);
    // Write then rename: a crash never leaves a half-written clip under the real name.
    await writeFile(tmp, bytes, { mode: 0o600 });
    await rename(tmp, join(this.dir, id));
  }

  get(id: string): Promise<Uint8Array> {
    return readFile(join(this.dir, id));
  }
}
