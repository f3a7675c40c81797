// SPDX-License-Identifier: GPL-3.0-or-later
// vitest setup file: the database copies a test file made (copyTemplate, one per test server) are
// removed when the file ends, after its own afterAll hooks closed its servers (vitest runs the
// after-hooks in reverse order: a setup file's last), instead of all at once when the run ends.
import { afterAll } from 'vitest';
import { removeCopies } from './databaseCopies.js';

afterAll(() => removeCopies());
