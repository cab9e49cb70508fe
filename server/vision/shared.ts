/**
 * Per-frame sharing of expensive detector runs between detectors: faces serve FACE_DETECTION,
 * heads (a visible face is a head) and ID cards (a card's portrait), so the face detector runs
 * once per image object and threshold however many of those features a request asks for.
 * (Text detection is shared the same way in text-detect.ts: plates, documents, ID cards.)
 */
import { FaceDetector } from "./faces";
import type { Detection, RgbImage } from "./types";

const KEY = Symbol.for("obscura.vision.faceDetector");

/** The process's face detector (created once; its ONNX sessions are cached by onnx.ts). */
export function faceDetector(): FaceDetector {
  const g = globalThis as { [KEY]?: FaceDetector };
  return (g[KEY] ??= new FaceDetector());
}

const memo = new WeakMap<RgbImage, Map<number, Promise<Detection[]>>>();

/** Faces of `image` at `threshold`, computed once per image object and threshold. */
export function detectFacesShared(image: RgbImage, threshold: number): Promise<Detection[]> {
  let m = memo.get(image);
  if (!m) memo.set(image, (m = new Map()));
  let p = m.get(threshold);
  if (!p) {
    p = faceDetector().detect(image, { threshold });
    m.set(threshold, p);
    p.catch(() => m!.delete(threshold));
  }
  return p;
}
