// SPDX-License-Identifier: GPL-3.0-or-later
// What a media process prints (its native code, Node itself) reaches the API process's log as
// records, one per line; OpenH264's notice on every new encoder at debug, anything else at warn.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { pino } from 'pino';
import { expect, it } from 'vitest';
import { logMediaProcessOutput } from '../../../src/media/mediaProcesses/mediaProcessOutput.js';

const NOTICE =
  '[OpenH264] this = 0x0x7fbcf43da3e0, Warning:Actual input framerate 0.000000 is different from framerate in setting 25.000000, suggest to use other rate control modes';

it("turns a child process's printed lines into log records at the right level", async () => {
  const records: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'debug' },
    { write: (line: string) => void records.push(JSON.parse(line) as Record<string, unknown>) },
  ).child({ media_process: 3 });
  const script = [
    `process.stderr.write(${JSON.stringify(`${NOTICE}\n`)});`,
    "process.stderr.write('Segmentation fault in the encoder\\r\\n\\n');",
    "process.stdout.write('x'.repeat(5000) + '\\n');",
  ].join('');
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  logMediaProcessOutput(child.stdout, log, 'stdout');
  logMediaProcessOutput(child.stderr, log, 'stderr');
  await once(child, 'close');

  const byStream = (name: string) => records.filter((r) => name in r);
  expect(byStream('stderr')).toEqual([
    expect.objectContaining({
      level: 20,
      media_process: 3,
      stderr: NOTICE,
      msg: 'media process output',
    }),
    expect.objectContaining({ level: 40, stderr: 'Segmentation fault in the encoder' }),
  ]);
  const [long] = byStream('stdout');
  expect(long).toMatchObject({ level: 40, media_process: 3 });
  expect((long!.stdout as string).length).toBe(2_001); // cut, with an ellipsis
});
