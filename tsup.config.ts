import { defineConfig } from 'tsup';

// Type declarations take nearly all of a build's time (105 s against 4 s for the code on a busy
// 2-core machine), and what `npx visage` runs needs none. So `npm ci`/`npm install` (the
// `prepare` script) build the code only; `npm run build`, `npm pack` and `npm publish` (whose
// `prepare` runs under npm_command pack/publish) build the declarations too.
const installing =
  process.env.npm_lifecycle_event === 'prepare' &&
  !['pack', 'publish'].includes(process.env.npm_command ?? '');

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
  dts: !installing,
  sourcemap: true,
  clean: true,
  splitting: true,
});
