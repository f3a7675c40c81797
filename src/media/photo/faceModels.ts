// SPDX-License-Identifier: GPL-3.0-or-later
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * face-api (`@vladmandic/face-api`, MIT) on TensorFlow.js's WebAssembly backend: no native build,
 * and nothing downloaded at run time. Both default to fetching from a CDN (the WASM binaries)
 * and from `file://models/` through fetch (the weights); here both come from the files inside
 * their npm packages. The CommonJS builds are loaded with `require` so that face-api and this
 * module share one TensorFlow.js (and one registry of backends).
 */
const require = createRequire(import.meta.url);

export type FaceApi = typeof import('@vladmandic/face-api/dist/face-api.node-wasm.js');
export type Tfjs = typeof import('@tensorflow/tfjs');

/** TensorFlow.js as face-api's CommonJS build loads it (the same instance). */
export const tfjs = (): Tfjs => require('@tensorflow/tfjs') as Tfjs;

/**
 * Which networks a caller needs: detection + landmarks to build (the tiny detector confirms the
 * detector's faces, the age and gender net estimates the voice register), recognition to compare.
 */
export type FaceNet = 'detector' | 'tinyDetector' | 'landmarks' | 'ageGender' | 'recognition';

let api: Promise<FaceApi> | undefined;
const loaded = new Map<FaceNet, Promise<void>>();

/** The face-api module on the WASM backend, initialised once per thread. */
export function faceApi(): Promise<FaceApi> {
  api ??= (async () => {
    const faceapi = require('@vladmandic/face-api/dist/face-api.node-wasm.js') as FaceApi;
    const wasm = require('@tensorflow/tfjs-backend-wasm') as {
      setWasmPaths(prefix: string): void;
    };
    const wasmDir = join(
      dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')),
      'dist',
    );
    // A plain path (not a URL): in Node the backend then reads the binary with fs, not fetch.
    wasm.setWasmPaths(`${wasmDir}/`);
    const tf = tfjs();
    await tf.setBackend('wasm');
    await tf.ready();
    return faceapi;
  })();
  api.catch(() => (api = undefined));
  return api;
}

/** face-api with the networks `nets` loaded from its package's `model/` folder. */
export async function faceApiWith(...nets: FaceNet[]): Promise<FaceApi> {
  const faceapi = await faceApi();
  const modelDir = join(dirname(require.resolve('@vladmandic/face-api/package.json')), 'model');
  await Promise.all(
    nets.map((net) => {
      let loading = loaded.get(net);
      if (!loading) {
        const target = {
          detector: faceapi.nets.ssdMobilenetv1,
          tinyDetector: faceapi.nets.tinyFaceDetector,
          landmarks: faceapi.nets.faceLandmark68Net,
          ageGender: faceapi.nets.ageGenderNet,
          recognition: faceapi.nets.faceRecognitionNet,
        }[net];
        loading = target.loadFromDisk(modelDir);
        loading.catch(() => loaded.delete(net));
        loaded.set(net, loading);
      }
      return loading;
    }),
  );
  return faceapi;
}
