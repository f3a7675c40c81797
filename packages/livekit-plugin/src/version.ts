// SPDX-License-Identifier: Apache-2.0
import pkg from '../package.json' with { type: 'json' };

/** This package's version, which the plugin reports to the agents framework. */
export const VERSION: string = pkg.version;
