// SPDX-License-Identifier: GPL-3.0-or-later
// The README's "Walkthrough with curl", run as a user pastes it (issue 45): its shell block is read
// out of README.md, each command runs in bash (with curl) in this checkout against a real
// `visage dev` (the build, bin/visage.js), with the placeholders (`sk_...`, `ses_...`,
// `file_...`, `avt_...`, `vc_...`) replaced by the key and the ids of the answers before, and
// each answer is checked against what the README says beneath it: the status it names, and
// every `"field":value` it shows (`"ses_…"` means "starts with ses_"). The block's last session
// must end up ended: the walkthrough once deleted the first session instead.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { copyTemplate } from '../server/templateDatabase.js';
import { describeWebRtc } from '../support/network.js';
import { buildCli, startCli, type CliProcess } from './cliProcess.js';

const run = promisify(execFile);
const REPO = resolve('.');
const README = readFileSync(join(REPO, 'README.md'), 'utf8');
const WALKTHROUGH = /^### Walkthrough with curl\n[\s\S]*?```sh\n([\s\S]*?)```/m.exec(README)![1]!;
const PLACEHOLDER = /\b(sk|ses|file|avt|vc)_\.\.\./g;

/** One command of the block, with what the README says it answers. */
interface Step {
  command: string;
  /** The comment after it on its line and on the comment lines that follow it. */
  says: string;
}

/** The block's commands (comment lines before a command are prose, after one its answer). */
export function steps(block: string): Step[] {
  const out: Step[] = [];
  // The command whose answer the comment lines below it show; a blank line ends it.
  let answering: Step | undefined;
  for (const line of block.split('\n')) {
    if (line.trim() === '') {
      answering = undefined;
      continue;
    }
    if (line.startsWith('#')) {
      if (answering) answering.says += ` ${line}`;
      continue;
    }
    const hash = line.search(/\s+#\s/);
    const step = {
      command: hash < 0 ? line : line.slice(0, hash),
      says: hash < 0 ? '' : line.slice(hash).trim(),
    };
    out.push(step);
    answering = step.command.startsWith('curl') ? step : undefined;
  }
  return out;
}

/** The `"field":value` pairs an answer shown in the README names (`…` ends a prefix). */
export function shownFields(says: string): Array<[string, string]> {
  return [...says.matchAll(/"(\w+)":("[^"]*"|true|false|-?\d+)/g)].map((m) => [m[1]!, m[2]!]);
}

describe("reading the walkthrough's commands", () => {
  it('pairs each command with the answer shown beneath it', () => {
    const block = [
      'curl -s $V/a    # the first',
      '# {"id":"ses_…","status":"active"}',
      'S=ses_...                # its id',
      '',
      '# Prose about the next one {"not":"an answer"}',
      'curl -s -X DELETE $V/a/$S   # 204',
    ].join('\n');
    expect(steps(block)).toEqual([
      { command: 'curl -s $V/a', says: '# the first # {"id":"ses_…","status":"active"}' },
      { command: 'S=ses_...', says: '# its id' },
      { command: 'curl -s -X DELETE $V/a/$S', says: '# 204' },
    ]);
    expect(shownFields('# {"id":"ses_…","n":2,"ok":true}')).toEqual([
      ['id', '"ses_…"'],
      ['n', '2'],
      ['ok', 'true'],
    ]);
  });
});

describeWebRtc("the README's walkthrough against `visage dev`", () => {
  let dev: CliProcess;
  let apiUrl: string;
  let livekitUrl: string;
  let key: string;

  beforeAll(async () => {
    await buildCli();
    const dir = copyTemplate(inject('dbTemplate'));
    dev = startCli(['dev', '--port', '0', '--livekit-port', '0', '--data-dir', dir], {
      built: true,
    });
    const banner = await dev.waitFor(/Press Ctrl-C/, 180_000);
    apiUrl = /API:\s+(http:\/\/\S+)/.exec(banner)![1]!;
    livekitUrl = /ws:\/\/[\d.]+:\d+/.exec(banner)![0];
    key = /sk_[0-9A-Za-z]{40}/.exec(banner)![0];
  }, 300_000);

  afterAll(() => dev?.child.kill('SIGKILL'));

  it('answers every command as the README shows, and ends the session it says it ends', async () => {
    // The latest id of each kind the answers gave (the key: the one visage dev printed).
    const latest: Record<string, string> = { sk: key };
    // Each command runs after the assignments before it; curl also prints the status it got.
    const assignments: string[] = ['curl() { command curl -w "\\n%{http_code}" "$@"; }'];
    const checked: string[] = [];
    let lastCreated: string | undefined;
    // This run's ports for the defaults the README shows.
    const ports = (text: string) =>
      text
        .replaceAll('http://127.0.0.1:8080', apiUrl)
        .replaceAll('ws://127.0.0.1:7880', livekitUrl);
    for (const step of steps(WALKTHROUGH).map((s) => ({ ...s, says: ports(s.says) }))) {
      const command = ports(step.command).replace(PLACEHOLDER, (whole, kind: string) => {
        const id = latest[kind];
        if (!id) throw new Error(`${whole} in "${step.command}" before any answer gave one`);
        return id;
      });
      if (!command.startsWith('curl ')) {
        assignments.push(command);
        continue;
      }
      const { stdout } = await run('bash', ['-c', [...assignments, command].join('\n')], {
        cwd: REPO,
        timeout: 120_000,
      });
      // The status is the last line (the README's own -w, where it has one, replaces ours).
      const out = stdout.trimEnd();
      const cut = out.lastIndexOf('\n');
      const status = Number(out.slice(cut + 1));
      const body = cut < 0 ? '' : out.slice(0, cut);
      const what = `${step.command}\n  answered ${status} ${body.slice(0, 300)}`;
      const named = /#\s*(\d{3})\s*$/.exec(step.says)?.[1];
      if (named) expect(status, what).toBe(Number(named));
      else expect(status >= 200 && status < 300, what).toBe(true);
      if (status !== 204) {
        const answer = JSON.parse(body) as Record<string, unknown>;
        for (const [field, shown] of shownFields(step.says)) {
          const actual = answer[field];
          if (shown.includes('…')) {
            expect(String(actual), `${field} of ${what}`).toMatch(
              new RegExp(`^${shown.slice(1, shown.indexOf('…'))}`),
            );
          } else expect(JSON.stringify(actual), `${field} of ${what}`).toBe(shown);
        }
        for (const value of Object.values(answer)) {
          const kind = typeof value === 'string' ? /^(ses|file|avt|vc)_/.exec(value)?.[1] : null;
          if (kind) latest[kind] = value as string;
        }
        if (/\/v1\/sessions$/.test(step.command) && typeof answer.session_id === 'string') {
          lastCreated = answer.session_id;
        }
      }
      checked.push(`${status} ${step.command}`);
    }
    console.log(`README walkthrough:\n${checked.join('\n')}`);
    expect(checked.length).toBeGreaterThanOrEqual(10);

    // "A session with both, then end it": the one created last is the one that ended.
    const res = await fetch(`${apiUrl}/v1/sessions/${lastCreated}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const session = (await res.json()) as { status: string; end_reason: string | null };
    expect(`${session.status}/${session.end_reason}`).toBe('ended/deleted');
  }, 600_000);
});
