/** Entry of a media worker process (started by WorkerPoolMediaCore; see mediaWorker.ts). */
import { runMediaWorker } from './mediaWorker.js';

runMediaWorker();
