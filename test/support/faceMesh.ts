// SPDX-License-Identifier: GPL-3.0-or-later
// A second opinion on the lips: Human's face mesh (`@vladmandic/human`, MIT; MediaPipe's 468-point
// face mesh, its weights inside the npm package), on the same TensorFlow.js and WASM backend as
// face-api. face-api's 68 points are fitted as a whole shape, and on a smile it draws an upper
// lip where a laugh stretched it thin or a moustache hides it, and places its inner-lip points
// either side of the line where closed lips meet (docs/photo-lips-landmarks.jpg): it reads a real
// closed smile 6.6 % of nose-to-chin apart. The mesh follows the lip line itself.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { faceApi, tfjs } from '../../src/media/photo/faceModels.js';

const require = createRequire(import.meta.url);

type HumanModule = typeof import('@vladmandic/human');
type Human = InstanceType<HumanModule['Human']>;

interface Artifacts {
  modelTopology: unknown;
  weightSpecs: unknown[];
  weightData: ArrayBuffer;
  format?: string;
  generatedBy?: string;
  convertedBy?: string;
}

/** Where Human's models lie, inside its package. */
const MODEL_PREFIX = 'visage-human-model:';

/**
 * A TensorFlow.js load handler for Human's models read from disk: TensorFlow.js without its
 * native Node binding has no `file://` handler (it would fetch, and Node's fetch refuses files).
 */
function diskModelHandler(url: string | string[]) {
  const name = Array.isArray(url) ? url[0] : url;
  if (typeof name !== 'string' || !name.startsWith(MODEL_PREFIX)) return null;
  const path = name.slice(MODEL_PREFIX.length);
  return {
    load: async (): Promise<Artifacts> => {
      const json = JSON.parse(readFileSync(path, 'utf8')) as {
        modelTopology: unknown;
        weightsManifest: { paths: string[]; weights: unknown[] }[];
        format?: string;
        generatedBy?: string;
        convertedBy?: string;
      };
      const buffers: Buffer[] = [];
      const weightSpecs: unknown[] = [];
      for (const group of json.weightsManifest) {
        for (const p of group.paths) buffers.push(readFileSync(join(dirname(path), p)));
        weightSpecs.push(...group.weights);
      }
      const all = Buffer.concat(buffers);
      return {
        modelTopology: json.modelTopology,
        weightSpecs,
        weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength),
        format: json.format,
        generatedBy: json.generatedBy,
        convertedBy: json.convertedBy,
      };
    },
  };
}

let human: Promise<Human> | undefined;

/** Human with only its face detector and mesh, loaded once per thread. */
function faceMeshModel(): Promise<Human> {
  human ??= (async () => {
    // face-api's set-up picks the WASM backend from the package's own files.
    await faceApi();
    const tf = tfjs() as unknown as {
      io: { registerLoadRouter(h: typeof diskModelHandler): void };
    };
    tf.io.registerLoadRouter(diskModelHandler);
    // The package's `exports` names its builds without the `./` Node requires, so its WASM build
    // is found beside the main one (whose TensorFlow.js binding is never loaded).
    const dist = dirname(require.resolve('@vladmandic/human'));
    const { Human } = require(join(dist, 'human.node-wasm.js')) as HumanModule;
    const modelDir = join(dist, '..', 'models');
    const h = new Human({
      backend: 'wasm',
      modelBasePath: `${MODEL_PREFIX}${modelDir}/`,
      debug: false,
      cacheSensitivity: 0,
      filter: { enabled: false },
      face: {
        enabled: true,
        detector: { rotation: true, maxDetected: 1, minConfidence: 0.2, return: false },
        mesh: { enabled: true },
        iris: { enabled: false },
        emotion: { enabled: false },
        description: { enabled: false },
        antispoof: { enabled: false },
        liveness: { enabled: false },
      },
      body: { enabled: false },
      hand: { enabled: false },
      object: { enabled: false },
      gesture: { enabled: false },
      segmentation: { enabled: false },
    } as never);
    await h.load();
    return h;
  })();
  human.catch(() => (human = undefined));
  return human;
}

export type MeshPoint = readonly [number, number, number];

/** The 468 mesh points (picture pixels, x, y, depth) of the largest face, or undefined. */
export async function faceMesh(
  rgb: Uint8Array,
  width: number,
  height: number,
): Promise<MeshPoint[] | undefined> {
  const h = await faceMeshModel();
  const tensor = tfjs().tensor4d(rgb, [1, height, width, 3], 'float32');
  try {
    const result = await h.detect(tensor as never);
    const face = [...result.face].sort((a, b) => b.box[2] * b.box[3] - a.box[2] * a.box[3])[0];
    if (!face || face.mesh.length < 468) return undefined;
    return face.mesh.map((p): MeshPoint => [p[0], p[1], p[2] ?? 0]);
  } finally {
    tensor.dispose();
  }
}

/**
 * The inner lips' points facing each other (upper, lower) across the mouth: MediaPipe's
 * canonical mesh, from the left of the mouth's middle to its right.
 */
const INNER_LIP_PAIRS: readonly [number, number][] = [
  [81, 178],
  [82, 87],
  [13, 14],
  [312, 317],
  [311, 402],
];
/** Below the nose (subnasale) and the chin's lowest point. */
const NOSE_BASE = 2;
const CHIN = 152;

/**
 * The gap between the inner lips along the nose-to-chin direction (mean over the mouth's middle,
 * negative overlap counted as 0) and the nose-to-chin height, mesh pixels: the same figure as
 * face-api's `innerLipGap`, from the mesh.
 */
export function meshLipGap(mesh: readonly MeshPoint[]): { gap: number; noseToChin: number } {
  const nose = mesh[NOSE_BASE]!;
  const chin = mesh[CHIN]!;
  const noseToChin = Math.hypot(chin[0] - nose[0], chin[1] - nose[1]);
  const down = [(chin[0] - nose[0]) / noseToChin, (chin[1] - nose[1]) / noseToChin] as const;
  let gap = 0;
  for (const [u, l] of INNER_LIP_PAIRS) {
    const d = (mesh[l]![0] - mesh[u]![0]) * down[0] + (mesh[l]![1] - mesh[u]![1]) * down[1];
    gap += Math.max(0, d);
  }
  return { gap: gap / INNER_LIP_PAIRS.length, noseToChin };
}
