/**
 * "Track automatically" for a box a reviewer draws (docs/sessions.md#following-an-object-tracksfollow):
 * follows the picture under the box forward and backward from its frame by normalised
 * cross-correlation template matching on grey, downscaled frames (the template ~48 px on its long
 * side), searching a window around the last position at three scales, coarse then fine. The
 * template adapts slowly (90% kept) but is always compared with the drawn original too, so it does
 * not drift onto the background; the object is lost when the best match scores under
 * LOST_SCORE on two frames in a row, or leaves the picture. The result is simplified to the
 * keyframes linear interpolation needs to stay within 1.5 px of every tracked box.
 */
import { decodeFrames, type MediaInfo } from "../media";

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface FollowKeyframe {
  frame: number;
  box: Box;
  score: number | null;
  source: "manual" | "predicted";
}

export type StopReason = "lostTarget" | "endOfVideo" | "maxFrames";

export interface FollowResult {
  firstFrame: number;
  lastFrame: number;
  keyframes: FollowKeyframe[];
  stopped: { forward?: StopReason; backward?: StopReason };
  /** Frames examined per second (decoding included). */
  framesPerSecond: number;
}

/** Best match scores below this on two frames in a row: the object is lost. */
export const LOST_SCORE = 0.5;
const TEMPLATE_SIDE = 48;
const SCALES = [0.95, 1, 1.05];

/** A grey image. */
export interface Gray {
  data: Uint8Array | Float32Array;
  width: number;
  height: number;
}

export function toGray(rgb: Uint8Array, width: number, height: number): Gray {
  const data = new Uint8Array(width * height);
  for (let i = 0, j = 0; i < data.length; i++, j += 3) data[i] = 0.299 * rgb[j]! + 0.587 * rgb[j + 1]! + 0.114 * rgb[j + 2]!;
  return { data, width, height };
}

/** A w x h patch of `img` at (x, y) (float position, bilinear), zero-mean and unit-norm. */
export function patch(img: Gray, x: number, y: number, w: number, h: number, sw = w, sh = h): Float32Array | null {
  const out = new Float32Array(w * h);
  const fx = sw / w;
  const fy = sh / h;
  let sum = 0;
  for (let j = 0; j < h; j++) {
    const py = y + (j + 0.5) * fy - 0.5;
    const y0 = Math.floor(py);
    const ty = py - y0;
    if (y0 < 0 || y0 + 1 >= img.height) return null;
    for (let i = 0; i < w; i++) {
      const px = x + (i + 0.5) * fx - 0.5;
      const x0 = Math.floor(px);
      const tx = px - x0;
      if (x0 < 0 || x0 + 1 >= img.width) return null;
      const a = img.data[y0 * img.width + x0]!;
      const b = img.data[y0 * img.width + x0 + 1]!;
      const c = img.data[(y0 + 1) * img.width + x0]!;
      const d = img.data[(y0 + 1) * img.width + x0 + 1]!;
      const v = (a * (1 - tx) + b * tx) * (1 - ty) + (c * (1 - tx) + d * tx) * ty;
      out[j * w + i] = v;
      sum += v;
    }
  }
  return normalise(out, sum);
}

function normalise(v: Float32Array, sum = v.reduce((a, b) => a + b, 0)): Float32Array {
  const mean = sum / v.length;
  let ss = 0;
  for (let i = 0; i < v.length; i++) {
    v[i] = v[i]! - mean;
    ss += v[i]! * v[i]!;
  }
  const norm = Math.sqrt(ss) || 1;
  for (let i = 0; i < v.length; i++) v[i] = v[i]! / norm;
  return v;
}

/** Normalised cross-correlation of two normalised patches (-1..1). */
export function ncc(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** State of one direction's follow: the template (patch size tw x th) and the box in work pixels. */
interface Tracker {
  original: Float32Array;
  template: Float32Array;
  tw: number;
  th: number;
  box: Box;
  misses: number;
}

/** One step: the best box in `img` near the last one, and its score; null when it left the picture. */
export function step(t: Tracker, img: Gray): { box: Box; score: number } | null {
  const radius = Math.max(6, 0.5 * Math.max(t.box.width, t.box.height));
  let best: { box: Box; score: number } | null = null;
  const tryAt = (x: number, y: number, w: number, h: number) => {
    const p = patch(img, x, y, t.tw, t.th, w, h);
    if (!p) return;
    const score = 0.7 * ncc(p, t.template) + 0.3 * ncc(p, t.original);
    if (!best || score > best.score) best = { box: { x, y, width: w, height: h }, score };
  };
  for (const s of SCALES) {
    const w = t.box.width * s;
    const h = t.box.height * s;
    const cx = t.box.x + t.box.width / 2;
    const cy = t.box.y + t.box.height / 2;
    const stepPx = Math.max(1, Math.round(radius / 6));
    for (let dy = -radius; dy <= radius; dy += stepPx) for (let dx = -radius; dx <= radius; dx += stepPx) tryAt(cx + dx - w / 2, cy + dy - h / 2, w, h);
  }
  if (!best) return null;
  // refine around the coarse winner
  const coarse: { box: Box; score: number } = best;
  for (const r of [2, 1, 0.5]) {
    const b0 = (best as { box: Box; score: number }).box;
    for (let dy = -r; dy <= r; dy += r) for (let dx = -r; dx <= r; dx += r) if (dx || dy) tryAt(b0.x + dx, b0.y + dy, b0.width, b0.height);
  }
  return best ?? coarse;
}

function startTracker(img: Gray, box: Box): Tracker | null {
  const long = Math.max(box.width, box.height);
  const k = Math.min(1, TEMPLATE_SIDE / long);
  const tw = Math.max(8, Math.round(box.width * k));
  const th = Math.max(8, Math.round(box.height * k));
  const p = patch(img, box.x, box.y, tw, th, box.width, box.height);
  if (!p) return null;
  return { original: p, template: p.slice(), tw, th, box, misses: 0 };
}

function adapt(t: Tracker, img: Gray, box: Box, score: number): void {
  t.box = box;
  if (score < 0.75) return;
  const p = patch(img, box.x, box.y, t.tw, t.th, box.width, box.height);
  if (!p) return;
  for (let i = 0; i < p.length; i++) t.template[i] = 0.9 * t.template[i]! + 0.1 * p[i]!;
  normalise(t.template);
}

/**
 * Keeps the keyframes linear interpolation needs: every frame's box within `tol` of the line
 * between the kept neighbours (greedy, from the first frame).
 */
export function simplify(frames: FollowKeyframe[], tol = 1.5): FollowKeyframe[] {
  if (frames.length <= 2) return frames;
  const out = [frames[0]!];
  let a = 0;
  while (a < frames.length - 1) {
    let b = a + 1;
    while (b + 1 < frames.length && fits(frames, a, b + 1, tol)) b++;
    out.push(frames[b]!);
    a = b;
  }
  return out;
}

function fits(f: FollowKeyframe[], a: number, b: number, tol: number): boolean {
  const A = f[a]!;
  const B = f[b]!;
  for (let i = a + 1; i < b; i++) {
    const t = (f[i]!.frame - A.frame) / (B.frame - A.frame);
    const K = f[i]!.box;
    for (const key of ["x", "y", "width", "height"] as const) if (Math.abs(A.box[key] + (B.box[key] - A.box[key]) * t - K[key]) > tol) return false;
  }
  return true;
}

/**
 * Follows `box` (display pixels) from `frame` forward and/or backward in the video `file`, up to
 * `maxFrames` each way. Frames are the video's own (constant-rate timeline, like detection).
 */
export async function follow(file: string, info: MediaInfo, opts: { frame: number; box: Box; direction: "both" | "forward" | "backward"; maxFrames: number; frameCount: number; signal?: AbortSignal }): Promise<FollowResult> {
  const started = Date.now();
  let examined = 0;
  const long = Math.max(opts.box.width, opts.box.height);
  // work size: the template around TEMPLATE_SIDE px, the picture at most 960 px wide
  const maxSide = Math.round(Math.min(Math.max(info.video.displayWidth, info.video.displayHeight), Math.max(160, (Math.max(info.video.displayWidth, info.video.displayHeight) * TEMPLATE_SIDE * 2.5) / long), 960));
  const startBox = { ...opts.box };
  const fwd: FollowKeyframe[] = [];
  const back: FollowKeyframe[] = [];
  const stopped: FollowResult["stopped"] = {};
  const last = opts.frameCount - 1;

  const tracker: { forward?: Tracker | null; backward?: Tracker | null } = {};
  let scale = 1;
  /** Tracks from `prev` (the frame before in this direction) to `img` (frame `index`). */
  const advance = (order: "forward" | "backward", out: FollowKeyframe[], prev: Gray, img: Gray, index: number): StopReason | null => {
    const t = (tracker[order] ??= startTracker(prev, { x: startBox.x / scale, y: startBox.y / scale, width: startBox.width / scale, height: startBox.height / scale }));
    if (!t) return "lostTarget";
    const r = step(t, img);
    if (!r) return "lostTarget";
    if (r.score < LOST_SCORE) {
      t.misses++;
      if (t.misses >= 2) {
        out.splice(out.length - (t.misses - 1), t.misses - 1); // the frame that already missed goes too
        return "lostTarget";
      }
    } else t.misses = 0;
    adapt(t, img, r.box, r.score);
    const b = r.box;
    out.push({ frame: index, box: { x: round(b.x * scale), y: round(b.y * scale), width: round(b.width * scale), height: round(b.height * scale) }, score: +Math.max(0, r.score).toFixed(3), source: "predicted" });
    return null;
  };
  const decode = (from: number, count: number) => decodeFrames(file, info, { start: from, count, maxSide, signal: opts.signal });

  /** Forward: frames tracked as they arrive, two kept at a time. */
  const forward = async (count: number): Promise<StopReason | null> => {
    let prev: Gray | null = null;
    for await (const f of decode(opts.frame, count)) {
      scale = f.scale;
      examined++;
      const img = toGray(f.image.data, f.image.width, f.image.height);
      if (prev) {
        const reason = advance("forward", fwd, prev, img, f.index);
        if (reason) return reason;
      }
      prev = img;
    }
    return null;
  };
  /** Backward: chunks of frames decoded oldest first, walked newest first (bounded memory). */
  const backward = async (from: number): Promise<StopReason | null> => {
    const CHUNK = 48;
    for (let end = opts.frame; end > from; ) {
      const chunkStart = Math.max(from, end - CHUNK);
      const frames: Gray[] = [];
      for await (const f of decode(chunkStart, end - chunkStart + 1)) {
        scale = f.scale;
        examined++;
        frames.push(toGray(f.image.data, f.image.width, f.image.height));
      }
      for (let i = frames.length - 2; i >= 0; i--) {
        const reason = advance("backward", back, frames[i + 1]!, frames[i]!, chunkStart + i);
        if (reason) return reason;
      }
      end = chunkStart;
    }
    return null;
  };

  if (opts.direction !== "backward") {
    const count = Math.min(opts.maxFrames, last - opts.frame) + 1;
    if (count <= 1) stopped.forward = "endOfVideo";
    else {
      stopped.forward = (await forward(count)) ?? (opts.frame + opts.maxFrames >= last ? "endOfVideo" : "maxFrames");
    }
  }
  if (opts.direction !== "forward") {
    const from = Math.max(0, opts.frame - opts.maxFrames);
    if (from >= opts.frame) stopped.backward = "endOfVideo";
    else {
      stopped.backward = (await backward(from)) ?? (from === 0 ? "endOfVideo" : "maxFrames");
    }
  }
  const all: FollowKeyframe[] = [...back.reverse(), { frame: opts.frame, box: startBox, score: 1, source: "manual" }, ...fwd];
  const keyframes = simplify(all);
  const seconds = Math.max(0.001, (Date.now() - started) / 1000);
  return { firstFrame: all[0]!.frame, lastFrame: all.at(-1)!.frame, keyframes, stopped, framesPerSecond: +(examined / seconds).toFixed(1) };
}

const round = (v: number) => Math.round(v * 10) / 10;
