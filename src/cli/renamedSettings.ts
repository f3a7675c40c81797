// SPDX-License-Identifier: GPL-3.0-or-later

/**
 * Settings renamed so that each word means one thing (docs/architecture.md, "Glossary": a
 * *worker* is a LiveKit agent worker, a *media process* an operating-system process that runs
 * avatars, a *thread* a `worker_threads` thread). The old names are still read, so an existing
 * setup keeps working, and each use of one prints a one-line warning naming the new one.
 */

/** Old variable: the variable that replaced it (the old one is read when the new one is unset). */
export const RENAMED_VARIABLES = {
  VISAGE_WORKERS: 'VISAGE_MEDIA_PROCESSES',
  VISAGE_WORKER_MAX_SESSIONS: 'VISAGE_MEDIA_PROCESS_MAX_SESSIONS',
} as const;

/** Old values of a variable, each with the value that replaced it. */
export const RENAMED_VALUES = {
  VISAGE_TTS_THREAD: { worker: 'thread' },
} as const satisfies Record<string, Record<string, string>>;

/** Old flag (without `--`): the flag that replaced it. */
export const RENAMED_FLAGS = { workers: 'media-processes' } as const;

type OldVariable = keyof typeof RENAMED_VARIABLES;
type Renamed = { env: NodeJS.ProcessEnv; warnings: string[] };

const set = (value: string | undefined) => value !== undefined && value.trim() !== '';

/**
 * The environment with every old name and value moved to the new one (a new name set beside
 * the old one wins), and a warning for each old one used.
 */
export function renameEnvironment(env: NodeJS.ProcessEnv): Renamed {
  const renamed: NodeJS.ProcessEnv = { ...env };
  const warnings: string[] = [];
  for (const [old, now] of Object.entries(RENAMED_VARIABLES) as [OldVariable, string][]) {
    if (!set(env[old])) continue;
    delete renamed[old];
    if (set(env[now])) {
      warnings.push(`${old} is deprecated and ignored: ${now} is set`);
    } else {
      renamed[now] = env[old];
      warnings.push(`${old} is deprecated: use ${now}`);
    }
  }
  for (const [name, values] of Object.entries(RENAMED_VALUES)) {
    const value = renamed[name]?.trim().toLowerCase();
    const now = value === undefined ? undefined : (values as Record<string, string>)[value];
    if (now === undefined) continue;
    renamed[name] = now;
    warnings.push(`${name}=${value} is deprecated: use ${name}=${now}`);
  }
  return { env: renamed, warnings };
}

/**
 * The value of a renamed flag: the new flag's, else the old one's (with a warning). `values`
 * is what `parseFlags` returned, with both flags declared.
 */
export function renamedFlag(
  values: Record<string, unknown>,
  old: keyof typeof RENAMED_FLAGS,
  warnings: string[],
): string | undefined {
  const now = RENAMED_FLAGS[old];
  const newValue = values[now] as string | undefined;
  const oldValue = values[old] as string | undefined;
  if (oldValue === undefined) return newValue;
  warnings.push(
    newValue === undefined
      ? `--${old} is deprecated: use --${now}`
      : `--${old} is deprecated and ignored: --${now} is given`,
  );
  return newValue ?? oldValue;
}

/** Prints the warnings, one line each, on stderr (before anything else the command prints). */
export function printRenamedWarnings(
  warnings: string[],
  write = (s: string) => process.stderr.write(s),
) {
  for (const warning of warnings) write(`visage: warning: ${warning}\n`);
}
