// SPDX-License-Identifier: GPL-3.0-or-later
/** Entry of a media process (started by ProcessPoolMediaCore; see mediaProcess.ts). */
import { runMediaProcess } from './mediaProcess.js';

runMediaProcess();
