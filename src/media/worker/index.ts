export {
  AudioWorkerPool,
  audioWorkerPool,
  speechWorkerPool,
  type AudioWorkerPoolOptions,
} from './audioWorkerPool.js';
