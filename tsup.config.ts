import { build as esbuild } from 'esbuild';
import { defineConfig } from 'tsup';
import { playgroundBundleOptions } from './src/cli/playground/playgroundBundle.js';

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
    // Makes the database template a first `visage dev` copies (package.json's prepare, build).
    'cli/prepareDatabase': 'src/cli/prepareDatabase.ts',
    // An audio thread (src/media/audioThreads/audioThreadPool.ts finds it here).
    'media/audioThread': 'src/media/audioThreads/audioThread.ts',
    // The photo thread (src/media/photo/photoThreadPool.ts finds it here).
    'media/photoThread': 'src/media/photo/photoThread.ts',
    // The embedded database's thread (src/server/store/database.ts finds it here).
    'server/databaseThread': 'src/server/store/databaseThread.ts',
    // A media process (src/media/mediaProcesses/mediaProcessHandle.ts finds it here).
    'media/mediaProcess': 'src/media/mediaProcesses/mediaProcessMain.ts',
  },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: !installing,
  sourcemap: true,
  clean: true,
  splitting: true,
  // Loaded only when the CLI runs from its TypeScript sources (playgroundScript.ts).
  external: ['esbuild'],
  // `visage dev`'s playground page script, for the browser, with livekit-client bundled in.
  onSuccess: async () => {
    await esbuild({
      ...playgroundBundleOptions('src/cli/playground/browser/playground.ts'),
      outfile: 'dist/playground/playground.js',
    });
  },
});
