// SPDX-License-Identifier: GPL-3.0-or-later
import pkg from '../package.json' with { type: 'json' };

/** The package version, reported by `/healthz`, the OpenAPI document and `visage --version`. */
export const VERSION: string = pkg.version;
