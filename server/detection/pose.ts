/**
 * Head pose from 2D landmarks by fitting a generic 3D face (a scaled orthographic camera: the
 * face is small against its distance to the camera, as in photos of people).
 *
 * Six iBUG points with a mean 3D position (millimetres-like units, x to the person's left seen
 * from the camera = image right, y up, z towards the camera): nose tip, chin, the outer eye
 * corners and the mouth corners. The 2x3 linear map taking the centred model points to the centred
 * image points (y flipped to point up) is solved by least squares; its rows, normalised and made
 * orthogonal, are the first two rows of the rotation, the third is their cross product.
 *
 * Angles in degrees, as the person moves their head:
 *   yaw   > 0 turned to the image's right (the person's left), < 0 to the image's left
 *   pitch > 0 looking up, < 0 looking down
 *   roll  > 0 head tilted clockwise in the image (towards the image's right shoulder... the person's left)
 * `frontal` is |yaw| <= 20 and |pitch| <= 20 (FRONTAL_DEGREES).
 */
import type { Point2 } from "./landmarks";

export type Vec3 = [number, number, number];

/** iBUG index -> generic 3D position. */
export const MODEL_POINTS: ReadonlyArray<[number, Vec3]> = [
  [30, [0, 0, 0]], // nose tip
  [8, [0, -330, -65]], // chin
  [36, [-225, 170, -135]], // right eye, outer corner (image left)
  [45, [225, 170, -135]], // left eye, outer corner
  [48, [-150, -150, -125]], // mouth, right corner
  [54, [150, -150, -125]], // mouth, left corner
];

export const FRONTAL_DEGREES = 20;

export interface Pose {
  pitch: number;
  roll: number;
  yaw: number;
}

const dot = (a: Vec3, b: Vec3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const norm = (a: Vec3): Vec3 => {
  const n = Math.hypot(...a) || 1;
  return [a[0] / n, a[1] / n, a[2] / n];
};
const cross = (a: Vec3, b: Vec3): Vec3 => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];

/** Inverse of a symmetric 3x3 matrix (null when singular). */
function inv3(m: number[][]): number[][] | null {
  const [a, b, c] = m[0]!;
  const [d, e, f] = m[1]!;
  const [g, h, i] = m[2]!;
  const A = e! * i! - f! * h!;
  const B = -(d! * i! - f! * g!);
  const C = d! * h! - e! * g!;
  const det = a! * A + b! * B + c! * C;
  if (Math.abs(det) < 1e-12) return null;
  return [
    [A / det, -(b! * i! - c! * h!) / det, (b! * f! - c! * e!) / det],
    [B / det, (a! * i! - c! * g!) / det, -(a! * f! - c! * d!) / det],
    [C / det, -(a! * h! - b! * g!) / det, (a! * e! - b! * d!) / det],
  ];
}

/** The rotation (rows: image x, image y up, towards the camera) fitted to 2D points of the model's 3D points. */
export function fitRotation(image: readonly Point2[], model: readonly Vec3[]): Vec3[] | null {
  const n = image.length;
  const mx = image.reduce((s, p) => s + p[0], 0) / n;
  const my = image.reduce((s, p) => s + p[1], 0) / n;
  const mm: Vec3 = [0, 1, 2].map((k) => model.reduce((s, p) => s + p[k]!, 0) / n) as Vec3;
  const X = model.map((p) => [p[0] - mm[0], p[1] - mm[1], p[2] - mm[2]] as Vec3);
  const u = image.map((p) => p[0] - mx);
  const v = image.map((p) => -(p[1] - my)); // y up
  const XtX = [0, 1, 2].map((r) => [0, 1, 2].map((c) => X.reduce((s, p) => s + p[r]! * p[c]!, 0)));
  const inv = inv3(XtX);
  if (!inv) return null;
  const row = (t: number[]): Vec3 => {
    const Xt: Vec3 = [0, 1, 2].map((k) => X.reduce((s, p, j) => s + p[k]! * t[j]!, 0)) as Vec3;
    return [0, 1, 2].map((r) => dot(inv[r] as Vec3, Xt)) as Vec3;
  };
  const r1 = norm(row(u));
  let r2 = row(v);
  const k = dot(r1, r2);
  r2 = norm([r2[0] - k * r1[0], r2[1] - k * r1[1], r2[2] - k * r1[2]]);
  return [r1, r2, cross(r1, r2)];
}

const deg = (r: number) => (r * 180) / Math.PI;
const round1 = (v: number) => Math.round(v * 10) / 10 + 0; // + 0: no -0 in the JSON

/** Pitch, roll and yaw (degrees) of a rotation from fitRotation. */
export function anglesOf(R: readonly Vec3[]): Pose {
  const [r1, r2, r3] = R as [Vec3, Vec3, Vec3];
  // R = Rz(roll) Ry(yaw) Rx(pitch) acting on model points
  const yaw = Math.asin(Math.max(-1, Math.min(1, -r3[0])));
  const pitch = Math.atan2(r3[1], r3[2]);
  const roll = Math.atan2(r2[0], r1[0]);
  return { pitch: round1(-deg(pitch)), roll: round1(-deg(roll)), yaw: round1(deg(yaw)) };
}

/** Pose from the 68 landmarks (image pixels); null when the points are degenerate. */
export function poseFromLandmarks(points68: readonly Point2[]): Pose | null {
  const R = fitRotation(
    MODEL_POINTS.map(([i]) => points68[i]!),
    MODEL_POINTS.map(([, p]) => p),
  );
  return R ? anglesOf(R) : null;
}

export const isFrontal = (p: Pose) => Math.abs(p.yaw) <= FRONTAL_DEGREES && Math.abs(p.pitch) <= FRONTAL_DEGREES;
