/**
 * The pixel operations: redaction styles drawn in place on a Frame (frame.ts), per box only.
 * Every style works plane by plane, so RGB and YUV 4:2:0 frames take the same code; a plane
 * sample belongs to a box when its centre (in frame pixels) does, and chroma samples that touch
 * the box are included (the effect covers the box, never less).
 *
 * Block styles share one grid: the box (clipped to the frame) is cut into tilesX x tilesY tiles
 * of equal size, tilesX = max(1, round(width / block)), so no tile is thinner than 2/3 of a
 * block (a thin edge tile would keep fine detail). Every output pixel of BLUR, PIXELATE and
 * MOSAIC is computed from tile means only, hence no detail finer than one block survives:
 *
 * - PIXELATE: each tile is its mean, flat.
 * - MOSAIC: each tile takes the mean of a tile picked by a keyed hash in its 3x3 neighbourhood
 *   (itself or a neighbour: the arrangement is scrambled, some means are repeated, others lost),
 *   plus keyed noise of up to +-MOSAIC_NOISE levels (luma, a quarter of it on chroma), with a
 *   darker 1-px joint between tiles. The key is secret (random per render) and stable per object
 *   and tile, so the mosaic does not flicker and averaging many frames removes no noise: the
 *   block means, which alone could be matched against candidate faces, cannot be recovered.
 * - BLUR: the grid of means is smoothed ([1 2 1] both ways) and interpolated bilinearly back to
 *   pixels: a soft blur that, unlike a convolution of the original, cannot be deconvolved.
 * - FILL: a flat colour. OUTLINE: a stroke along the box or ellipse, the content left visible.
 * ELLIPSE: the ellipse inscribed in the box, with a soft inner edge (styles.ts featherWidth).
 */
import type { Box } from "@/lib/geometry";
import { planeColors, type Frame, type Plane } from "./frame";
import { blockSize, featherWidth, MOSAIC_NOISE, outlineWidth, type ObjectStyle } from "./styles";

export interface RedactObject {
  box: Box;
  style: ObjectStyle;
  /** Secret 32-bit key of this object (MOSAIC's tile shuffle and noise); stable across frames. */
  key: number;
}

/**
 * Draws every object on the frame in place: the effects, larger boxes first (a face inside a
 * person ends up redacted by its own style), then the outlines on top.
 */
export function redactFrame(frame: Frame, objects: readonly RedactObject[]): void {
  if (!objects.length) return;
  const order = [...objects].sort((a, b) => {
    const oa = a.style.style === "OUTLINE" ? 1 : 0;
    const ob = b.style.style === "OUTLINE" ? 1 : 0;
    return oa - ob || b.box.width * b.box.height - a.box.width * a.box.height;
  });
  for (const o of order) redactBox(frame, o.box, o.style, o.key);
}

/** Region of the frame a box covers (integer, clipped), or null when it is outside. */
function region(frame: Frame, box: Box): { x0: number; y0: number; x1: number; y1: number } | null {
  if (!(box.width > 0 && box.height > 0) || ![box.x, box.y, box.width, box.height].every(Number.isFinite)) return null;
  const x0 = Math.max(0, Math.floor(box.x));
  const y0 = Math.max(0, Math.floor(box.y));
  const x1 = Math.min(frame.width, Math.ceil(box.x + box.width));
  const y1 = Math.min(frame.height, Math.ceil(box.y + box.height));
  return x1 > x0 && y1 > y0 ? { x0, y0, x1, y1 } : null;
}

/** Sample window of a plane over a frame region: plane coordinates [px0, px1) x [py0, py1). */
function window(p: Plane, r: { x0: number; y0: number; x1: number; y1: number }) {
  const s = p.sub;
  return { px0: Math.floor(r.x0 / s), py0: Math.floor(r.y0 / s), px1: Math.min(p.width, Math.ceil(r.x1 / s)), py1: Math.min(p.height, Math.ceil(r.y1 / s)) };
}

/**
 * Coverage of a shape at a sample centre (frame pixels): 1 inside, 0 outside, a ramp over the
 * feather band inside an ellipse's edge. `span` gives, for a row, the x range where coverage can
 * be above 0 and the inner x range where it is surely 1, so only the edge band is computed per
 * pixel. Null for rectangles (everything in the region is covered).
 */
interface Coverage {
  at(x: number, y: number): number;
  /** [outer start, inner start, inner end, outer end] in frame x for row centre y (inner may be empty). */
  span(y: number): [number, number, number, number];
}

function ellipseSpan(cx: number, cy: number, a: number, b: number, y: number): [number, number] | null {
  if (a <= 0 || b <= 0) return null;
  const dy = (y - cy) / b;
  if (dy <= -1 || dy >= 1) return null;
  const half = a * Math.sqrt(1 - dy * dy);
  return [cx - half, cx + half];
}

function coverageOf(box: Box, style: ObjectStyle): Coverage | null {
  if (style.shape !== "ELLIPSE") return null;
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  const ax = box.width / 2;
  const by = box.height / 2;
  const ia2 = 1 / (ax * ax);
  const ib2 = 1 / (by * by);
  const feather = featherWidth(style.style, box.width, box.height);
  const inv = 1 / Math.max(1, feather);
  // Inside the ellipse shrunk by feather + 1 px the first-order distance to the edge exceeds the feather.
  const inner = feather + 1;
  return {
    at(x, y) {
      const dx = x - cx;
      const dy = y - cy;
      const f = dx * dx * ia2 + dy * dy * ib2 - 1;
      if (f >= 0) return 0;
      const gx = dx * ia2;
      const gy = dy * ib2;
      const g = 2 * Math.sqrt(gx * gx + gy * gy);
      const inside = g > 0 ? -f / g : Infinity; // distance to the edge, in pixels (first order)
      return inside >= feather ? 1 : Math.max(0, Math.min(1, (inside + 0.5) * inv));
    },
    span(y) {
      const o = ellipseSpan(cx, cy, ax, by, y);
      if (!o) return [0, 0, 0, 0];
      const i = ellipseSpan(cx, cy, ax - inner, by - inner, y);
      return i ? [o[0], i[0], i[1], o[1]] : [o[0], o[1], o[1], o[1]];
    },
  };
}

/**
 * Sample index ranges of one plane row [px0, px0 + pw): [a, b) edge, [b, c) fully covered,
 * [c, d) edge; all full for rectangles.
 */
/** Index of the first sample of a row whose centre (px0 + x + 0.5) * sub is after u, in [0, pw]. */
function firstAfter(u: number, px0: number, pw: number, sub: number): number {
  return Math.min(pw, Math.max(0, Math.floor(u / sub - 0.5) + 1 - px0));
}

function rowRanges(cover: Coverage | null, fy: number, px0: number, pw: number, sub: number): [number, number, number, number] {
  if (!cover) return [0, 0, pw, pw];
  const [o0, i0, i1, o1] = cover.span(fy);
  const a = firstAfter(o0, px0, pw, sub);
  const d = Math.max(a, firstAfter(o1, px0, pw, sub));
  const b = Math.min(d, Math.max(a, firstAfter(i0, px0, pw, sub)));
  const c = Math.min(d, Math.max(b, firstAfter(i1, px0, pw, sub)));
  return [a, b, c, d];
}

export function redactBox(frame: Frame, box: Box, style: ObjectStyle, key: number): void {
  const r = region(frame, box);
  if (!r) return;
  const cover = coverageOf(box, style);
  if (style.style === "OUTLINE") return outline(frame, box, r, style);
  if (style.style === "FILL") {
    const colors = planeColors(frame, style.color);
    frame.planes.forEach((p, i) => fill(p, r, colors[i]!, cover));
    return;
  }
  const block = blockSize(box.width, box.height, style.intensity);
  const w = r.x1 - r.x0;
  const h = r.y1 - r.y0;
  const tx = Math.max(1, Math.round(w / block));
  const ty = Math.max(1, Math.round(h / block));
  const grid: Grid = { x0: r.x0, y0: r.y0, tx, ty, tw: w / tx, th: h / ty };
  const mosaic = style.style === "MOSAIC" ? mosaicPlan(grid, box, key, MOSAIC_NOISE[style.intensity]) : null;
  frame.planes.forEach((p, i) => blocks(p, r, grid, style.style as "BLUR" | "PIXELATE" | "MOSAIC", cover, mosaic, i));
}

interface Grid {
  x0: number;
  y0: number;
  tx: number;
  ty: number;
  tw: number;
  th: number;
}

/** MOSAIC: per tile, the tile whose mean it shows and its noise (luma and per plane). */
interface MosaicPlan {
  source: Int32Array;
  luma: Float32Array;
  /** Small independent noise per plane index (0..2). */
  plane: Float32Array[];
}

function mosaicPlan(g: Grid, box: Box, key: number, amplitude: number): MosaicPlan {
  const n = g.tx * g.ty;
  const source = new Int32Array(n);
  const luma = new Float32Array(n);
  const plane = [new Float32Array(n), new Float32Array(n), new Float32Array(n)];
  // Tiles are named by their position in block units from the box's corner, so a tile keeps its
  // shuffle and noise while the box moves or the grid gains a column.
  const ox = Math.round((g.x0 - box.x) / g.tw);
  const oy = Math.round((g.y0 - box.y) / g.th);
  for (let j = 0; j < g.ty; j++) {
    for (let i = 0; i < g.tx; i++) {
      const t = j * g.tx + i;
      const h = hash(key, i + ox, j + oy, 0);
      const si = Math.min(g.tx - 1, Math.max(0, i + (h % 3) - 1));
      const sj = Math.min(g.ty - 1, Math.max(0, j + (((h / 3) | 0) % 3) - 1));
      source[t] = sj * g.tx + si;
      luma[t] = (unit(hash(key, i + ox, j + oy, 1)) * 2 - 1) * amplitude;
      for (let c = 0; c < 3; c++) plane[c]![t] = (unit(hash(key, i + ox, j + oy, 2 + c)) * 2 - 1) * (amplitude / 4);
    }
  }
  return { source, luma, plane };
}

function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

function hash(key: number, i: number, j: number, c: number): number {
  return mix(key ^ mix(Math.imul(i, 0x9e3779b1) ^ mix(Math.imul(j, 0x85ebca77) ^ mix(c + 0x27d4eb2f))));
}

const unit = (h: number) => h / 4294967296;

/**
 * Writes one plane row from `vals` (indexed like the row's samples from px0): fully inside the
 * shape's inner range, blended by coverage on its edge ranges.
 */
function putRow(p: Plane, y: number, px0: number, vals: Uint8Array, ranges: [number, number, number, number], cover: Coverage | null): void {
  const { data, step, sub } = p;
  const base = p.offset + y * p.stride + px0 * step;
  const [a, b, c, d] = ranges;
  if (step === 1) data.set(vals.subarray(b, c), base + b);
  else for (let x = b, i = base + b * step; x < c; x++, i += step) data[i] = vals[x]!;
  if (!cover) return;
  const fy = (y + 0.5) * sub;
  for (let x = a; x < d; x++) {
    if (x === b) x = c;
    if (x >= d) break;
    const i = base + x * step;
    const al = cover.at((px0 + x + 0.5) * sub, fy);
    if (al >= 1) data[i] = vals[x]!;
    else if (al > 0) data[i] = Math.round(data[i]! + al * (vals[x]! - data[i]!));
  }
}

function fill(p: Plane, r: { x0: number; y0: number; x1: number; y1: number }, value: number, cover: Coverage | null): void {
  const { px0, py0, px1, py1 } = window(p, r);
  const pw = px1 - px0;
  if (pw <= 0) return;
  const vals = new Uint8Array(pw).fill(value);
  for (let y = py0; y < py1; y++) putRow(p, y, px0, vals, rowRanges(cover, (y + 0.5) * p.sub, px0, pw, p.sub), cover);
}

function blocks(
  p: Plane,
  r: { x0: number; y0: number; x1: number; y1: number },
  g: Grid,
  style: "BLUR" | "PIXELATE" | "MOSAIC",
  cover: Coverage | null,
  mosaic: MosaicPlan | null,
  planeIndex: number,
): void {
  const { px0, py0, px1, py1 } = window(p, r);
  const pw = px1 - px0;
  const ph = py1 - py0;
  if (pw <= 0 || ph <= 0) return;
  const { data, step, stride, sub } = p;
  const tx = g.tx;
  // Tiles by sample centre: tile column c covers samples [colStart[c], colStart[c + 1]) of the row.
  const colStart = new Int32Array(tx + 1);
  const rowT = new Int32Array(ph);
  for (let c = 1; c < tx; c++) colStart[c] = firstAfter(g.x0 + c * g.tw - 1e-9, px0, pw, sub);
  colStart[tx] = pw;
  for (let y = 0; y < ph; y++) rowT[y] = Math.min(g.ty - 1, Math.max(0, Math.floor(((py0 + y + 0.5) * sub - g.y0) / g.th)));

  // Tile means (a local sum per run of a row: no dependency through memory).
  const n = tx * g.ty;
  const sum = new Float64Array(n);
  const count = new Float64Array(n);
  for (let y = 0; y < ph; y++) {
    const rt = rowT[y]! * tx;
    const row = p.offset + (py0 + y) * stride + px0 * step;
    for (let c = 0; c < tx; c++) {
      const xs = colStart[c]!;
      const xe = colStart[c + 1]!;
      let acc = 0;
      for (let i = row + xs * step, end = row + xe * step; i < end; i += step) acc += data[i]!;
      sum[rt + c] += acc;
      count[rt + c] += xe - xs;
    }
  }
  const mean = new Float32Array(n);
  for (let t = 0; t < n; t++) mean[t] = count[t] ? sum[t]! / count[t]! : 0;

  const luma = p.role === "luma";
  const lowest = luma ? 16 : 0;
  const highest = luma ? 235 : 255;

  if (style === "BLUR") {
    const smooth = smoothGrid(mean, tx, g.ty);
    // Bilinear interpolation between tile centres: down the column first (one row of tx values),
    // then along the row.
    const cx0 = new Int32Array(pw);
    const cfx = new Float32Array(pw);
    for (let x = 0; x < pw; x++) {
      const u = Math.min(tx - 1, Math.max(0, ((px0 + x + 0.5) * sub - g.x0) / g.tw - 0.5));
      cx0[x] = Math.min(Math.max(0, tx - 2), Math.floor(u));
      cfx[x] = u - cx0[x]!;
    }
    const line = new Float32Array(tx + 1);
    const vals = new Uint8Array(pw);
    for (let y = 0; y < ph; y++) {
      const fy = (py0 + y + 0.5) * sub;
      const ranges = rowRanges(cover, fy, px0, pw, sub);
      if (ranges[0] >= ranges[3]) continue;
      const v = Math.min(g.ty - 1, Math.max(0, (fy - g.y0) / g.th - 0.5));
      const j0 = Math.floor(v);
      const r0 = j0 * tx;
      const r1 = Math.min(g.ty - 1, j0 + 1) * tx;
      const wy = v - j0;
      for (let c = 0; c < tx; c++) line[c] = smooth[r0 + c]! + wy * (smooth[r1 + c]! - smooth[r0 + c]!);
      line[tx] = line[tx - 1]!;
      for (let x = ranges[0]; x < ranges[3]; x++) {
        const a = cx0[x]!;
        vals[x] = line[a]! + cfx[x]! * (line[a + 1]! - line[a]!) + 0.5; // Uint8Array truncates: rounds
      }
      putRow(p, py0 + y, px0, vals, ranges, cover);
    }
    return;
  }

  // PIXELATE / MOSAIC: one value per tile, written in runs.
  const value = new Uint8Array(n);
  if (mosaic) {
    const rgb = p.role === "red" || p.role === "green" || p.role === "blue";
    for (let t = 0; t < n; t++) {
      const noise = p.role === "chroma" ? mosaic.plane[planeIndex]![t]! : mosaic.luma[t]! + (rgb ? mosaic.plane[planeIndex]![t]! : 0);
      const v = mean[mosaic.source[t]!]! + noise;
      value[t] = v < lowest ? lowest : v > highest ? highest : Math.round(v);
    }
  } else {
    for (let t = 0; t < n; t++) value[t] = Math.round(mean[t]!);
  }
  // MOSAIC joints: the last column / row of each tile, darker, on luma and RGB planes, when tiles
  // are at least 6 samples wide.
  const joints = !!mosaic && p.role !== "chroma" && g.tw / sub >= 6 && g.th / sub >= 6;
  const darker = new Uint8Array(n);
  if (joints) for (let t = 0; t < n; t++) darker[t] = lowest + Math.round((value[t]! - lowest) * 0.7);
  const vals = new Uint8Array(pw);
  for (let y = 0; y < ph; y++) {
    const fy = (py0 + y + 0.5) * sub;
    const ranges = rowRanges(cover, fy, px0, pw, sub);
    if (ranges[0] >= ranges[3]) continue;
    const rt = rowT[y]! * tx;
    const rowJoint = joints && y + 1 < ph && rowT[y + 1] !== rowT[y];
    const src = rowJoint ? darker : value;
    for (let c = 0; c < tx; c++) {
      const xs = colStart[c]!;
      const xe = colStart[c + 1]!;
      if (xe > xs) {
        vals.fill(src[rt + c]!, xs, xe);
        if (joints && c + 1 < tx) vals[xe - 1] = darker[rt + c]!;
      }
    }
    putRow(p, py0 + y, px0, vals, ranges, cover);
  }
}

/** [1 2 1] / 4 along x then y, edges clamped. */
function smoothGrid(m: Float32Array, tx: number, ty: number): Float32Array {
  const a = new Float32Array(m.length);
  for (let j = 0; j < ty; j++) {
    for (let i = 0; i < tx; i++) {
      const l = m[j * tx + Math.max(0, i - 1)]!;
      const r = m[j * tx + Math.min(tx - 1, i + 1)]!;
      a[j * tx + i] = (l + 2 * m[j * tx + i]! + r) / 4;
    }
  }
  const b = new Float32Array(m.length);
  for (let j = 0; j < ty; j++) {
    for (let i = 0; i < tx; i++) {
      const u = a[Math.max(0, j - 1) * tx + i]!;
      const d = a[Math.min(ty - 1, j + 1) * tx + i]!;
      b[j * tx + i] = (u + 2 * a[j * tx + i]! + d) / 4;
    }
  }
  return b;
}

function outline(frame: Frame, box: Box, r: { x0: number; y0: number; x1: number; y1: number }, style: ObjectStyle): void {
  const t = outlineWidth(frame.width, frame.height, style.intensity);
  const colors = planeColors(frame, style.color);
  const ellipse = style.shape === "ELLIPSE";
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  const ia2 = 1 / ((box.width / 2) ** 2);
  const ib2 = 1 / ((box.height / 2) ** 2);
  frame.planes.forEach((p, pi) => {
    const { px0, py0, px1, py1 } = window(p, r);
    const { data, step, stride, sub } = p;
    const c = colors[pi]!;
    for (let y = py0; y < py1; y++) {
      const fy = (y + 0.5) * sub;
      // Samples well inside the stroke's inner edge are skipped.
      const skip = ellipse ? ellipseSpan(cx, cy, box.width / 2 - t - 2, box.height / 2 - t - 2, fy) : fy - r.y0 >= t + 1 && r.y1 - fy >= t + 1 ? [r.x0 + t + 1, r.x1 - t - 1] : null;
      const s0 = skip ? Math.ceil(skip[0] / sub - 0.5) : px1;
      const s1 = skip ? Math.floor(skip[1] / sub - 0.5) : px1;
      for (let x = px0; x < px1; x++) {
        if (x > s0 && x < s1) x = s1;
        const i = p.offset + y * stride + x * step;
        const fx = (x + 0.5) * sub;
        let a: number;
        if (ellipse) {
          const dx = fx - cx;
          const dy = fy - cy;
          const f = dx * dx * ia2 + dy * dy * ib2 - 1;
          const g = 2 * Math.sqrt((dx * ia2) ** 2 + (dy * ib2) ** 2);
          const inside = g > 0 ? -f / g : Infinity;
          a = Math.max(0, Math.min(1, inside + 0.5)) * Math.max(0, Math.min(1, t + 0.5 - inside));
        } else {
          const inside = Math.min(fx - r.x0, r.x1 - fx, fy - r.y0, r.y1 - fy);
          a = inside < t ? 1 : 0;
        }
        if (a >= 1) data[i] = c;
        else if (a > 0) data[i] = Math.round(data[i]! + a * (c - data[i]!));
      }
    }
  });
}
