export { WorkerPoolMediaCore, type WorkerPoolOptions } from './workerPoolMediaCore.js';
