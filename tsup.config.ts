import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'client/index': 'src/client/index.ts',
    'server/index': 'src/server/index.ts',
    'cli/main': 'src/cli/main.ts',
    // The audio worker pool's thread (src/media/worker/audioWorkerPool.ts finds it here).
    'media/audioWorker': 'src/media/worker/audioWorker.ts',
    // The photo worker's thread (src/media/photo/photoWorkerPool.ts finds it here).
    'media/photoWorker': 'src/media/photo/photoWorker.ts',
    // A media worker process (src/media/workerPool/mediaWorkerProcess.ts finds it here).
    'media/mediaWorker': 'src/media/workerPool/mediaWorkerMain.ts',
  },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: true,
});
