export { WorkerPoolMediaCore, type WorkerPoolOptions } from './workerPoolMediaCore.js';
export type { WorkerStats } from './workerProtocol.js';
