/**
 * Constant-velocity Kalman filter over a box, as in SORT / ByteTrack (BoT-SORT's (cx, cy, w, h)
 * variant, which follows aspect changes of turning heads and cars better than (cx, cy, a, h)).
 *
 * State x = (cx, cy, w, h, vcx, vcy, vw, vh), one step = one video frame:
 *
 *   predict:  x' = F x,            P' = F P Fᵀ + Q         F = [[I4, I4], [0, I4]]
 *   update:   y = z - H x,  S = H P Hᵀ + R,  K = P Hᵀ S⁻¹,  x += K y,  P = (I - K H) P    H = [I4, 0]
 *
 * Noise (the ByteTrack / BoT-SORT values), standard deviations proportional to the box size so one
 * filter serves a 12-px face and a 600-px bus:
 *   initial P:  position 2·wp·s,  velocity 10·wv·s
 *   Q per step: position wp·s,    velocity wv·s
 *   R:          wp·s
 * with wp = 1/20, wv = 1/160, and s = the box width for cx and w, the box height for cy and h.
 *
 * F, H, Q, R and the initial P are all block-diagonal per coordinate: each of cx, cy, w, h is its
 * own (position, velocity) pair and nothing ever couples two coordinates. The 8x8 filter is
 * therefore exactly four independent 2-state filters, each with a symmetric 2x2 covariance
 *
 *   P = | pp  pv |      F = | 1  1 |      H = | 1  0 |
 *       | pv  vv |          | 0  1 |
 *
 * and that is how it is written below (one small fixed-size matrix per coordinate, every product
 * expanded by hand). test/tracking.test.ts checks it against a plain 8x8 matrix implementation.
 */
import type { Box } from "@/lib/geometry";

export const STD_WEIGHT_POSITION = 1 / 20;
export const STD_WEIGHT_VELOCITY = 1 / 160;

/** Coordinates in state order. cx and w scale their noise with the width, cy and h with the height. */
const AXES = 4;
const SCALE_BY_WIDTH = [true, false, true, false] as const;
/** Smallest width/height a box keeps (a shrinking prediction never turns inside out). */
const MIN_SIZE = 1;

/** (cx, cy, w, h) of a box. */
export function boxToMeasurement(b: Box): [number, number, number, number] {
  return [b.x + b.width / 2, b.y + b.height / 2, b.width, b.height];
}

export function measurementToBox(cx: number, cy: number, w: number, h: number): Box {
  const width = Math.max(MIN_SIZE, w);
  const height = Math.max(MIN_SIZE, h);
  return { x: cx - width / 2, y: cy - height / 2, width, height };
}

export interface PredictOptions {
  /**
   * Hold w and h constant (their velocities set to 0) — what ByteTrack does for a track that has
   * lost its object, so that a prediction neither balloons nor shrinks away while nothing corrects it.
   */
  freezeSize?: boolean;
}

export class BoxKalman {
  /** (cx, cy, w, h, vcx, vcy, vw, vh). */
  readonly mean = new Float64Array(8);
  /** Per coordinate i: cov[3i] = pp, cov[3i+1] = pv, cov[3i+2] = vv. */
  readonly cov = new Float64Array(AXES * 3);

  /** Starts a filter on a first detection, with zero velocity. */
  constructor(box: Box) {
    const z = boxToMeasurement(box);
    for (let i = 0; i < AXES; i++) {
      const s = this.scale(i, z[2], z[3]);
      const sp = 2 * STD_WEIGHT_POSITION * s;
      const sv = 10 * STD_WEIGHT_VELOCITY * s;
      this.mean[i] = z[i]!;
      this.mean[i + AXES] = 0;
      this.cov[3 * i] = sp * sp;
      this.cov[3 * i + 1] = 0;
      this.cov[3 * i + 2] = sv * sv;
    }
  }

  /** Advances the state by `steps` frames (one predict per frame, so Q accumulates as it should). */
  predict(steps = 1, opts: PredictOptions = {}): void {
    if (!Number.isInteger(steps) || steps < 0) throw new RangeError(`predict steps must be a whole number >= 0, got ${steps}`);
    if (opts.freezeSize) {
      this.mean[6] = 0;
      this.mean[7] = 0;
    }
    for (let k = 0; k < steps; k++) {
      const w = this.mean[2]!;
      const h = this.mean[3]!;
      for (let i = 0; i < AXES; i++) {
        const s = this.scale(i, w, h);
        const qp = (STD_WEIGHT_POSITION * s) ** 2;
        const qv = (STD_WEIGHT_VELOCITY * s) ** 2;
        // x' = F x: position += velocity.
        this.mean[i] = this.mean[i]! + this.mean[i + AXES]!;
        // P' = F P Fᵀ + Q with F = [[1, 1], [0, 1]]:
        //   pp' = pp + 2 pv + vv + qp,   pv' = pv + vv,   vv' = vv + qv
        const o = 3 * i;
        const pp = this.cov[o]!;
        const pv = this.cov[o + 1]!;
        const vv = this.cov[o + 2]!;
        this.cov[o] = pp + 2 * pv + vv + qp;
        this.cov[o + 1] = pv + vv;
        this.cov[o + 2] = vv + qv;
      }
    }
  }

  /** Corrects the state with a detected box. */
  update(box: Box): void {
    const z = boxToMeasurement(box);
    // R is taken from the predicted size (as ByteTrack's `project` does), before the mean moves.
    const w = this.mean[2]!;
    const h = this.mean[3]!;
    for (let i = 0; i < AXES; i++) {
      const s = this.scale(i, w, h);
      const r = (STD_WEIGHT_POSITION * s) ** 2;
      const o = 3 * i;
      const pp = this.cov[o]!;
      const pv = this.cov[o + 1]!;
      const vv = this.cov[o + 2]!;
      // S = H P Hᵀ + R = pp + r;   K = P Hᵀ S⁻¹ = (pp / S, pv / S)
      const sInv = 1 / (pp + r);
      const kp = pp * sInv;
      const kv = pv * sInv;
      // x += K y with the innovation y = z - H x.
      const y = z[i]! - this.mean[i]!;
      this.mean[i] = this.mean[i]! + kp * y;
      this.mean[i + AXES] = this.mean[i + AXES]! + kv * y;
      // P = (I - K H) P:  pp' = pp - kp pp,  pv' = pv - kp pv,  vv' = vv - kv pv
      this.cov[o] = pp - kp * pp;
      this.cov[o + 1] = pv - kp * pv;
      this.cov[o + 2] = vv - kv * pv;
    }
  }

  /** The current box (width and height at least 1 px). */
  box(): Box {
    return measurementToBox(this.mean[0]!, this.mean[1]!, this.mean[2]!, this.mean[3]!);
  }

  /** Velocity in pixels per frame: (vcx, vcy, vw, vh). */
  velocity(): [number, number, number, number] {
    return [this.mean[4]!, this.mean[5]!, this.mean[6]!, this.mean[7]!];
  }

  /** The full 8x8 covariance, row-major (for tests and debugging; the filter never builds it). */
  covariance8(): Float64Array {
    const P = new Float64Array(64);
    for (let i = 0; i < AXES; i++) {
      const o = 3 * i;
      P[i * 8 + i] = this.cov[o]!;
      P[i * 8 + i + AXES] = this.cov[o + 1]!;
      P[(i + AXES) * 8 + i] = this.cov[o + 1]!;
      P[(i + AXES) * 8 + i + AXES] = this.cov[o + 2]!;
    }
    return P;
  }

  private scale(axis: number, w: number, h: number): number {
    // Guard against a degenerate size making the noise vanish (a 0-px box would freeze the filter).
    return Math.max(MIN_SIZE, SCALE_BY_WIDTH[axis] ? w : h);
  }
}
