/** Entry of a media process (started by ProcessPoolMediaCore; see mediaProcess.ts). */
import { runMediaProcess } from './mediaProcess.js';

runMediaProcess();
