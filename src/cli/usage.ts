// SPDX-License-Identifier: GPL-3.0-or-later
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A command-line mistake: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Strict flag parsing: unknown flags and missing values are usage errors, not ignored. */
type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: true }>
>;

export function parseFlags<O extends Options>(
  argv: string[],
  options: O,
  positionals = 0,
): Parsed<O> {
  try {
    const parsed = parseArgs({
      args: argv,
      options,
      strict: true,
      allowPositionals: positionals > 0,
    });
    if (parsed.positionals.length > positionals) {
      throw new UsageError(`unexpected argument: ${parsed.positionals[positionals]}`);
    }
    return parsed as Parsed<O>;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError((err as Error).message);
  }
}

export function intFlag(
  value: string | undefined,
  name: string,
  fallback: number,
  min = 0,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new UsageError(`--${name} must be an integer >= ${min}`);
  return n;
}
