// SPDX-License-Identifier: Apache-2.0
import type { BuildOptions } from 'esbuild';

/** See browserBuild.js. */
export declare const browserBuild: BuildOptions;
