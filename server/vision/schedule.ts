/**
 * Video detection schedule: which detector passes run on which detection frame, so that a video
 * is analysed several times faster than with every pass on every detection frame, without a
 * tracked object going unredacted in any frame.
 *
 * Still images (detectImage) run every pass on the whole image; in a video, consecutive detection
 * frames (0.1 s apart in gen6_standard) mostly show the same objects, and the tracker carries a
 * track across detection frames that miss it (predicted, then interpolated between detections
 * once it is found again, up to the profile's maxMissedFrames). So per detection frame:
 *
 * - faces:
 *   - cheap passes on the whole frame, every detection frame: the face detector's FaceBoxes
 *     passes at scale <= 1 (faces from ~24 px up);
 *   - the expensive passes (FaceBoxes at scale > 1, BlazeFace tiles: the small faces, ~0.9 of the
 *     face time of a 720p frame) on one band of the frame: the frame is cut into bands one
 *     BlazeFace tile high (overlapping by at least BAND_OVERLAP_FACES), spread round-robin over
 *     the detection frames of one sweep period, so every region gets them at least every
 *     `sweepSeconds`;
 *   - the expensive passes also around every live face track (its predicted box grown by its
 *     motion and a margin, at least one tile), every detection frame: a small face found once by
 *     the sweep is then detected on every detection frame, like before.
 * - licence plates (PP-OCR text detection, plates.ts):
 *   - around every live plate track, every detection frame;
 *   - on every vehicle the COCO detector finds (grown by VEHICLE_MARGIN), at a resolution
 *     fitting the crop (small vehicles scaled up, see PlateDetector.regionTextOptions); COCO runs
 *     every `vehicleSeconds` (every detection frame when vehicles or people are requested anyway,
 *     its run is then shared) and its vehicle boxes are grown by their motion in between;
 *   - the whole frame in bands (fallback for plates on vehicles COCO misses, or without one),
 *     round-robin over `plateSweepSeconds`.
 *
 * The first detection frame gets every band (nothing was looked at before it). After that a new
 * object is found with a delay of up to one sweep period when only an expensive pass sees it (a
 * face under ~24 px, a plate on no detected vehicle); once found it is detected on every detection
 * frame. To leave none of the frames in between unredacted, face and plate tracks start
 * `headFrames(type)` before their first detection (`extendHead`, the first box moved back by the
 * track's velocity, as the tracker's own head keyframe) instead of the profile's stride - 1. The sweep period is capped at half the profile's maxMissedFrames so a
 * track that the per-track passes lose is found again by the sweep before it ends.
 *
 * Detectors are handed to `detectImage` as per-frame overrides (its `detectors` option), so the
 * engine's thresholds, face box expansion and merging apply unchanged.
 */
import { type Box, clip, coverage, iou } from "@/lib/geometry";
import { CocoDetector } from "./objects";
import { FaceDetector, type FaceOptions } from "./faces";

/** Fused FaceBoxes + BlazeFace score reported as 0.15 in videos (see the constructor). */
export const VIDEO_FACE_REFERENCE = 0.25;
import { PlateDetector } from "./plates";
import { cropRgb, pixelRegion, type Region } from "./text-detect";
import type { Track } from "../tracking";
import type { DetectOptions, Detection, Detector, ObjectType, RgbImage } from "./types";

export interface ScheduleOptions {
  /** Every region of the frame gets the expensive face passes at least this often (seconds). */
  sweepSeconds: number;
  /** Every region of the frame gets plate text detection at least this often (seconds). */
  plateSweepSeconds: number;
  /** COCO (vehicles for plate regions) at least this often (seconds), when not run anyway. */
  vehicleSeconds: number;
}

export const SCHEDULE_DEFAULTS: Readonly<ScheduleOptions> = {
  sweepSeconds: 0.4,
  plateSweepSeconds: 0.4,
  vehicleSeconds: 0.25,
};

/** Bands for the expensive face passes overlap by at least this many pixels (a face under ~24 px high is whole in one band; larger ones are the cheap passes'). */
export const BAND_OVERLAP_FACES = 24;
/** Plate bands overlap by this many pixels (a plate a band cuts is whole in its neighbour). */
export const BAND_OVERLAP_PLATES = 96;
/** Plate bands are at least this high. */
const MIN_PLATE_BAND = 192;
/** Vehicle boxes are grown by this factor (about the centre) into plate regions. */
export const VEHICLE_MARGIN = 1.2;
/**
 * Face tracks lower than this (frame pixels, the engine's expanded box: a ~64 px face) get the
 * expensive passes around them; larger faces are the cheap passes' (FaceBoxes at 1x finds faces
 * from ~24 px up).
 */
const SMALL_FACE = 96;
/** Per-track regions: the track's box grown by this much of its size on each side, plus its motion. */
const TRACK_MARGIN = 0.5;

export interface FrameGeometry {
  width: number;
  height: number;
  /** Display pixels (tracker boxes) per frame pixel. */
  scale: number;
}

/** Tracks as the tracker reports them after a detection frame (display pixels). */
export interface LiveTrack {
  id: number;
  type: ObjectType;
  box: Box;
}

/**
 * Bands `size` pixels across covering the frame, overlapping by at least `minOverlap`, spread
 * evenly from edge to edge: full-width horizontal bands in a landscape frame, full-height vertical
 * ones in a portrait frame; one band (the whole frame) when the frame is no larger than `size`.
 */
export function bands(width: number, height: number, size: number, minOverlap: number): Region[] {
  const horizontal = width >= height;
  const len = horizontal ? height : width;
  if (len <= size) return [{ x: 0, y: 0, width, height }];
  const n = Math.ceil((len - size) / Math.max(1, size - minOverlap)) + 1;
  const step = (len - size) / (n - 1);
  return Array.from({ length: n }, (_, i) => {
    const a = Math.round(i * step);
    return horizontal ? { x: 0, y: a, width, height: size } : { x: a, y: 0, width: size, height };
  });
}

/** Which of `count` items a round-robin over `period` detection frames handles on frame `k`. */
export function roundRobin(count: number, period: number, k: number): number[] {
  const p = Math.max(1, period);
  if (count <= 0) return [];
  // Item i runs on slot floor(i * p / count): every item once per `period` frames, spread evenly
  // (several per frame when there are more items than frames, none on some frames when fewer).
  const slot = k % p;
  return Array.from({ length: count }, (_, i) => i).filter((i) => Math.floor((i * p) / count) === slot);
}

/** Overlapping regions joined into their bounding region (fewer, larger model runs). */
export function joinRegions(regions: readonly Region[]): Region[] {
  const out = regions.filter((r) => r.width > 0 && r.height > 0).map((r) => ({ ...r }));
  let merged = true;
  while (merged) {
    merged = false;
    for (let i = 0; i < out.length && !merged; i++) {
      for (let j = i + 1; j < out.length && !merged; j++) {
        const a = out[i]!;
        const b = out[j]!;
        if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) {
          const x = Math.min(a.x, b.x);
          const y = Math.min(a.y, b.y);
          out[i] = { x, y, width: Math.max(a.x + a.width, b.x + b.width) - x, height: Math.max(a.y + a.height, b.y + b.height) - y };
          out.splice(j, 1);
          merged = true;
        }
      }
    }
  }
  return out;
}

const inside = (r: Region, outer: Region) => r.x >= outer.x && r.y >= outer.y && r.x + r.width <= outer.x + outer.width && r.y + r.height <= outer.y + outer.height;

/** Detections of a region's image moved into frame pixels. */
function offset(ds: readonly Detection[], r: Region): Detection[] {
  return ds.map((d) => ({ ...d, box: { ...d.box, x: d.box.x + r.x, y: d.box.y + r.y } }));
}

/** Best first; a box is dropped when it overlaps a kept one (IoU) or lies mostly inside it. */
function mergeBoxes(ds: readonly Detection[], iouMax: number, containedMin: number): Detection[] {
  const kept: Detection[] = [];
  for (const d of [...ds].sort((a, b) => b.score - a.score)) {
    if (kept.some((k) => iou(k.box, d.box) > iouMax || coverage(d.box, k.box) >= containedMin)) continue;
    kept.push(d);
  }
  return kept;
}

/** COCO once per frame image and threshold, shared by the engine's objects and the plate regions. */
class SharedCoco implements Detector {
  readonly name = "coco-centernet";
  readonly types: readonly ObjectType[];
  private readonly memo = new WeakMap<RgbImage, { threshold: number; result: Promise<Detection[]> }>();
  constructor(private readonly inner: Detector) {
    this.types = inner.types;
  }
  detect(image: RgbImage, opts: DetectOptions): Promise<Detection[]> {
    const m = this.memo.get(image);
    if (m && m.threshold <= opts.threshold) return m.result.then((ds) => ds.filter((d) => d.score >= opts.threshold));
    const result = this.inner.detect(image, opts);
    this.memo.set(image, { threshold: opts.threshold, result });
    return result;
  }
}

/**
 * The schedule of one video: `detectors(k)` gives the detector overrides for detection frame k
 * (0, 1, 2, ...), `observe(tracks)` takes the tracker's live tracks after that frame.
 */
export class VideoSchedule {
  readonly options: Readonly<ScheduleOptions>;
  /** Detection frames per sweep of the expensive face passes / plate bands, per COCO run. */
  readonly facePeriod: number;
  readonly platePeriod: number;
  readonly vehiclePeriod: number;
  readonly faceBands: Region[];
  readonly plateBands: Region[];
  private readonly cheapFaces: FaceDetector | null;
  private readonly expensiveFaces: FaceDetector | null;
  private readonly faceMerge: { iou: number; contained: number };
  private readonly plates = new PlateDetector();
  private readonly coco: SharedCoco;
  private tracks: LiveTrack[] = [];
  private motion = new Map<number, { dx: number; dy: number }>();
  private vehicles: Array<{ box: Box; k: number }> = [];
  private cocoFrame = 0;
  private readonly cocoEveryFrame: boolean;

  constructor(
    private readonly frame: FrameGeometry,
    /** Seconds between detection frames. */
    strideSeconds: number,
    /** The profile's maxMissedFrames in seconds (a sweep must come round well before a lost track ends). */
    maxMissedSeconds: number,
    features: readonly string[],
    options: Partial<ScheduleOptions> = {},
    faceOptions?: Partial<FaceOptions>,
  ) {
    const o = { ...SCHEDULE_DEFAULTS, ...options };
    this.options = o;
    const cap = maxMissedSeconds / 2;
    const period = (s: number) => Math.max(1, Math.floor((Math.min(s, cap) + 1e-9) / strideSeconds));
    this.facePeriod = period(o.sweepSeconds);
    this.platePeriod = period(o.plateSweepSeconds);
    this.vehiclePeriod = period(o.vehicleSeconds);
    this.cocoEveryFrame = features.includes("VEHICLE_DETECTION") || features.includes("PERSON_DETECTION") || features.includes("SCREEN_DETECTION") || features.includes("DOCUMENT_DETECTION");
    this.coco = new SharedCoco(new CocoDetector());

    // Faces: the configured detector split into its cheap part and its expensive part.
    const full = new FaceDetector(faceOptions ?? {}).options;
    this.faceMerge = { iou: full.nmsIou, contained: full.nmsContained };
    const cheap = full.passes.filter((p) => p.scale <= 1);
    const costly = full.passes.filter((p) => p.scale > 1);
    const off = { ...full.blazeface, tile: 0 };
    // Video runs FaceBoxes and BlazeFace only (SSD's tiles cost ~5x a band's passes), their fused
    // score reported as 0.15 at VIDEO_FACE_REFERENCE (faces-dev, every 3rd image, FaceBoxes 1x+2x
    // + BlazeFace fused: 0.2 -> 97.9 / 95.7 / 77.9 % found, 8.6 stray boxes per image; 0.25 ->
    // 96.7 / 91.1 / 67.0 %, 3.6; their plain union before fusion: 94.9 / 86.5 / 75.2 %, 9.4).
    const video = { ssd: [], fusion: { ...full.fusion, reference: VIDEO_FACE_REFERENCE } };
    this.cheapFaces = cheap.length ? new FaceDetector({ ...full, ...video, passes: cheap, blazeface: off }) : null;
    this.expensiveFaces = costly.length || full.blazeface.tile > 0 ? new FaceDetector({ ...full, ...video, passes: costly }) : null;
    const tile = full.blazeface.tile > 0 ? full.blazeface.tile : 256;
    this.faceBands = bands(frame.width, frame.height, Math.min(tile, Math.min(frame.width, frame.height)), BAND_OVERLAP_FACES);
    const plateCount = Math.max(1, Math.min(this.platePeriod, Math.floor((Math.min(frame.width, frame.height) - BAND_OVERLAP_PLATES) / (MIN_PLATE_BAND - BAND_OVERLAP_PLATES))));
    this.plateBands = splitEven(frame.width, frame.height, plateCount, BAND_OVERLAP_PLATES);
  }

  /**
   * Frames a track of `type` may have been in view before its first detection: one sweep period
   * of detection frames (`stride` video frames each) less one frame; 0 for the other types.
   */
  headFrames(type: ObjectType, stride: number): number {
    const period = type === "face" && this.expensiveFaces ? this.facePeriod : type === "licensePlate" ? this.platePeriod : 0;
    return Math.max(0, period * stride - 1);
  }

  /** Live tracks after a detection frame (tracker boxes, display pixels). */
  observe(tracks: readonly LiveTrack[]): void {
    const s = this.frame.scale;
    const prev = new Map(this.tracks.map((t) => [t.id, t.box]));
    const next = tracks.map((t) => ({ id: t.id, type: t.type, box: { x: t.box.x / s, y: t.box.y / s, width: t.box.width / s, height: t.box.height / s } }));
    const motion = new Map<number, { dx: number; dy: number }>();
    for (const t of next) {
      const p = prev.get(t.id);
      motion.set(t.id, p ? { dx: t.box.x + t.box.width / 2 - (p.x + p.width / 2), dy: t.box.y + t.box.height / 2 - (p.y + p.height / 2) } : { dx: 0, dy: 0 });
    }
    this.tracks = next;
    this.motion = motion;
  }

  /** Regions around the live tracks of a type, where they may be on the next detection frame. */
  trackRegions(type: ObjectType, minSide: number, maxHeight = Infinity): Region[] {
    const { width, height } = this.frame;
    return this.tracks
      .filter((t) => t.type === type && t.box.height < maxHeight)
      .map((t) => {
        const m = this.motion.get(t.id) ?? { dx: 0, dy: 0 };
        const b = { x: t.box.x + m.dx, y: t.box.y + m.dy, width: t.box.width, height: t.box.height };
        const gx = TRACK_MARGIN * b.width + Math.abs(m.dx);
        const gy = TRACK_MARGIN * b.height + Math.abs(m.dy);
        let r = { x: b.x - gx, y: b.y - gy, width: b.width + 2 * gx, height: b.height + 2 * gy };
        if (r.width < minSide) r = { ...r, x: r.x - (minSide - r.width) / 2, width: minSide };
        if (r.height < minSide) r = { ...r, y: r.y - (minSide - r.height) / 2, height: minSide };
        // keep the minimum size at the frame's edges
        r.x = Math.max(0, Math.min(r.x, width - r.width));
        r.y = Math.max(0, Math.min(r.y, height - r.height));
        return pixelRegion(r, width, height);
      })
      .filter((r) => r.width > 0 && r.height > 0);
  }

  /** Detector overrides for detection frame `k` (0, 1, 2, ... in order). */
  detectors(k: number): Record<string, Detector> {
    const out: Record<string, Detector> = {
      "plates-ppocr": { name: "plates-ppocr", types: ["licensePlate"], detect: (image, o) => this.detectPlates(image, o, k) },
      "coco-centernet": this.coco,
    };
    if (this.cheapFaces || this.expensiveFaces) out["faces-faceboxes"] = { name: "faces-faceboxes", types: ["face"], detect: (image, o) => this.detectFaces(image, o, k) };
    return out;
  }

  /** The face regions of frame k: this frame's sweep bands, then track regions outside them. */
  faceRegions(k: number): Region[] {
    const sweep = k === 0 ? this.faceBands : roundRobin(this.faceBands.length, this.facePeriod, k).map((i) => this.faceBands[i]!);
    const tile = Math.min(256, this.frame.width, this.frame.height);
    const around = joinRegions(this.trackRegions("face", tile, SMALL_FACE)).filter((r) => !sweep.some((b) => inside(r, b)));
    return [...sweep, ...around];
  }

  private async detectFaces(image: RgbImage, o: DetectOptions, k: number): Promise<Detection[]> {
    const found: Detection[] = [];
    if (this.cheapFaces) found.push(...(await this.cheapFaces.detect(image, o)));
    if (this.expensiveFaces) {
      for (const r of this.faceRegions(k)) {
        // A face cut by a crop's inner edge is seen whole elsewhere (the neighbouring band, or the
        // cheap passes when it is taller than the overlap): its cut-off half would be a stray box.
        const cut = (d: Detection) =>
          d.box.height > BAND_OVERLAP_FACES &&
          ((r.x > 0 && d.box.x <= 1) || (r.y > 0 && d.box.y <= 1) || (r.x + r.width < image.width && d.box.x + d.box.width >= r.width - 1) || (r.y + r.height < image.height && d.box.y + d.box.height >= r.height - 1));
        found.push(...offset((await this.expensiveFaces.detect(cropRgb(image, r), o)).filter((d) => !cut(d)), r));
      }
    }
    return mergeBoxes(found, this.faceMerge.iou, this.faceMerge.contained).map((d) => ({ ...d, box: clip(d.box, image.width, image.height) }));
  }

  /** The plate regions of frame k (vehicles need the frame's COCO run: see detectPlates). */
  plateRegions(k: number, vehicles: readonly Box[]): Region[] {
    const { width, height } = this.frame;
    const sweep = k === 0 ? this.plateBands : roundRobin(this.plateBands.length, this.platePeriod, k).map((i) => this.plateBands[i]!);
    const cars = vehicles.map((v) => pixelRegion(grow(v, VEHICLE_MARGIN), width, height));
    const around = this.trackRegions("licensePlate", 0);
    const extra = joinRegions([...cars, ...around]).filter((r) => !sweep.some((b) => inside(r, b)));
    return [...sweep, ...extra];
  }

  private async detectPlates(image: RgbImage, o: DetectOptions, k: number): Promise<Detection[]> {
    let vehicles: Box[];
    if (this.cocoEveryFrame || k === 0 || k - this.cocoFrame >= this.vehiclePeriod) {
      const found = (await this.coco.detect(image, { threshold: VEHICLE_THRESHOLD })).filter((d) => d.type === "vehicle" && d.score >= VEHICLE_THRESHOLD);
      this.cocoFrame = k;
      this.vehicles = found.map((d) => ({ box: d.box, k }));
      vehicles = found.map((d) => d.box);
    } else {
      // Vehicles of the last COCO run, grown by 15% per detection frame since (their motion).
      vehicles = this.vehicles.map((v) => grow(v.box, 1 + 0.15 * (k - v.k)));
    }
    return this.plates.detectInRegions(image, this.plateRegions(k, vehicles), o);
  }
}

/** COCO vehicles at or above this score get plate regions (the engine's vehicle threshold x 0.5). */
export const VEHICLE_THRESHOLD = 0.15;

function grow(b: Box, f: number): Box {
  const w = b.width * f;
  const h = b.height * f;
  return { x: b.x + b.width / 2 - w / 2, y: b.y + b.height / 2 - h / 2, width: w, height: h };
}

/** `count` equal bands across the frame (as `bands`), neighbours overlapping by `overlap`. */
export function splitEven(width: number, height: number, count: number, overlap: number): Region[] {
  const horizontal = width >= height;
  const len = horizontal ? height : width;
  const n = Math.max(1, Math.min(count, Math.floor(len / 8)));
  if (n === 1) return [{ x: 0, y: 0, width, height }];
  const out: Region[] = [];
  for (let i = 0; i < n; i++) {
    const a = Math.max(0, Math.floor((i * len) / n - overlap / 2));
    const b = Math.min(len, Math.ceil(((i + 1) * len) / n + overlap / 2));
    out.push(horizontal ? { x: 0, y: a, width, height: b - a } : { x: a, y: 0, width: b - a, height });
  }
  return out;
}

/**
 * The track starting `frames` before its first detection (when that is earlier than it starts
 * now): one predicted head keyframe there, the first detected box moved back by the velocity
 * between the first two detections, as the tracker's own head keyframe (tracker.ts).
 */
export function extendHead(track: Track, frames: number): Track {
  const det = track.keyframes.filter((k) => k.source === "detected");
  const first = det[0];
  if (!first) return track;
  const start = Math.max(0, first.frame - frames);
  if (start >= track.firstFrame) return track;
  let vx = 0;
  let vy = 0;
  const second = det[1];
  if (second) {
    const dt = second.frame - first.frame;
    vx = (second.box.x + second.box.width / 2 - (first.box.x + first.box.width / 2)) / dt;
    vy = (second.box.y + second.box.height / 2 - (first.box.y + first.box.height / 2)) / dt;
  }
  const k = first.frame - start;
  const head = { frame: start, box: { ...first.box, x: first.box.x - vx * k, y: first.box.y - vy * k }, score: null, source: "predicted" as const };
  return { ...track, firstFrame: start, keyframes: [head, ...track.keyframes.filter((kf) => kf.frame >= first.frame)] };
}
