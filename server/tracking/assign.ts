/**
 * Association of tracks with detections: an optimal one-to-one matching that maximises total IoU
 * above a threshold, as ByteTrack's `linear_assignment` (lapjv with `extend_cost`, `cost_limit`).
 *
 * ByteTrack minimises  Σ_matched (1 - iou)  +  (unmatched rows + unmatched cols) · cost_limit / 2
 * with pairs above cost_limit forbidden. Since every match removes one unmatched row and one
 * unmatched column, that equals a constant minus  Σ_matched (iou - minIou):  a maximum-weight
 * matching with weights  iou - minIou  over the allowed pairs. `matchBySimilarity` solves exactly
 * that, with the Hungarian algorithm (shortest augmenting paths with potentials, the
 * Jonker-Volgenant formulation) on each connected group of rows and columns that can match at all:
 * in a video nearly every track has one candidate, so most groups are a single pair and the
 * O(n²m) solver only runs on the crowded parts of a frame.
 */
import type { Box } from "@/lib/geometry";
import { iou } from "@/lib/geometry";

export interface Matching {
  /** [row, col] pairs, rows ascending. */
  pairs: Array<[number, number]>;
  unmatchedRows: number[];
  unmatchedCols: number[];
}

/**
 * Minimum-cost assignment of a rows x cols matrix (row-major): every row of the smaller side gets
 * a distinct column (or, when rows > cols, every column a distinct row). Returns for each row its
 * column or -1. O(min² · max).
 */
export function hungarian(cost: ArrayLike<number>, rows: number, cols: number): Int32Array {
  if (rows > cols) {
    // Solve the transpose so the inner loops run over the longer side.
    const t = new Float64Array(rows * cols);
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = cost[r * cols + c]!;
    const colToRow = hungarian(t, cols, rows);
    const rowToCol = new Int32Array(rows).fill(-1);
    colToRow.forEach((r, c) => {
      if (r >= 0) rowToCol[r] = c;
    });
    return rowToCol;
  }
  const n = rows;
  const m = cols;
  // 1-based: index 0 is the virtual start column of each augmenting path.
  const u = new Float64Array(n + 1); // row potentials
  const v = new Float64Array(m + 1); // column potentials
  const p = new Int32Array(m + 1); // p[j] = row assigned to column j (0 = none)
  const way = new Int32Array(m + 1); // previous column on the shortest path
  const minv = new Float64Array(m + 1);
  const used = new Uint8Array(m + 1);
  for (let i = 1; i <= n; i++) {
    p[0] = i;
    let j0 = 0;
    minv.fill(Infinity);
    used.fill(0);
    do {
      used[j0] = 1;
      const i0 = p[j0]!;
      let delta = Infinity;
      let j1 = 0;
      for (let j = 1; j <= m; j++) {
        if (used[j]) continue;
        const cur = cost[(i0 - 1) * m + (j - 1)]! - u[i0]! - v[j]!;
        if (cur < minv[j]!) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j]! < delta) {
          delta = minv[j]!;
          j1 = j;
        }
      }
      for (let j = 0; j <= m; j++) {
        if (used[j]) {
          u[p[j]!] = u[p[j]!]! + delta;
          v[j] = v[j]! - delta;
        } else {
          minv[j] = minv[j]! - delta;
        }
      }
      j0 = j1;
    } while (p[j0] !== 0);
    // Flip the augmenting path.
    do {
      const j1 = way[j0]!;
      p[j0] = p[j1]!;
      j0 = j1;
    } while (j0 !== 0);
  }
  const rowToCol = new Int32Array(n).fill(-1);
  for (let j = 1; j <= m; j++) if (p[j]! > 0) rowToCol[p[j]! - 1] = j - 1;
  return rowToCol;
}

/** Union-find root with path halving. */
function find(parent: Int32Array, a: number): number {
  while (parent[a] !== a) {
    parent[a] = parent[parent[a]!]!;
    a = parent[a]!;
  }
  return a;
}

/**
 * Maximum-weight one-to-one matching of rows with columns where `sim[r * cols + c] >= minSimilarity`
 * (weights sim - minSimilarity), i.e. ByteTrack's thresholded linear assignment.
 */
export function matchBySimilarity(sim: ArrayLike<number>, rows: number, cols: number, minSimilarity: number): Matching {
  // The allowed pairs (edges of the "may match" graph), and its connected groups by union-find
  // over nodes 0..rows-1 (rows) and rows..rows+cols-1 (columns).
  const parent = new Int32Array(rows + cols);
  for (let i = 0; i < parent.length; i++) parent[i] = i;
  const edges: number[] = []; // r, c, r, c, ...
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      if (sim[r * cols + c]! >= minSimilarity) {
        edges.push(r, c);
        const a = find(parent, r);
        const b = find(parent, rows + c);
        if (a !== b) parent[a] = b;
      }
    }
  }
  const groups = new Map<number, { rows: number[]; cols: number[]; edges: number[] }>();
  const seen = new Uint8Array(rows + cols);
  for (let e = 0; e < edges.length; e += 2) {
    const r = edges[e]!;
    const c = edges[e + 1]!;
    const root = find(parent, r);
    let g = groups.get(root);
    if (!g) groups.set(root, (g = { rows: [], cols: [], edges: [] }));
    g.edges.push(r, c);
    if (!seen[r]) {
      seen[r] = 1;
      g.rows.push(r);
    }
    if (!seen[rows + c]) {
      seen[rows + c] = 1;
      g.cols.push(c);
    }
  }

  const rowMatch = new Int32Array(rows).fill(-1);
  const colMatched = new Uint8Array(cols);
  for (const g of groups.values()) {
    if (g.rows.length === 1 || g.cols.length === 1) {
      // One side has a single member: the best allowed pair is optimal.
      let best = 0;
      for (let e = 2; e < g.edges.length; e += 2) {
        if (sim[g.edges[e]! * cols + g.edges[e + 1]!]! > sim[g.edges[best]! * cols + g.edges[best + 1]!]!) best = e;
      }
      rowMatch[g.edges[best]!] = g.edges[best + 1]!;
      colMatched[g.edges[best + 1]!] = 1;
      continue;
    }
    // Cost = -(weight) for allowed pairs (a hair below 0 so a pair exactly at the threshold still
    // beats "unmatched"), 0 for forbidden ones: a forced forbidden pair gains nothing and is dropped.
    const nr = g.rows.length;
    const nc = g.cols.length;
    const cost = new Float64Array(nr * nc);
    for (let a = 0; a < nr; a++) {
      for (let b = 0; b < nc; b++) {
        const s = sim[g.rows[a]! * cols + g.cols[b]!]!;
        cost[a * nc + b] = s >= minSimilarity ? -(s - minSimilarity) - 1e-9 : 0;
      }
    }
    const sol = hungarian(cost, nr, nc);
    for (let a = 0; a < nr; a++) {
      const b = sol[a]!;
      if (b < 0) continue;
      const r = g.rows[a]!;
      const c = g.cols[b]!;
      if (sim[r * cols + c]! >= minSimilarity) {
        rowMatch[r] = c;
        colMatched[c] = 1;
      }
    }
  }

  const pairs: Array<[number, number]> = [];
  const unmatchedRows: number[] = [];
  for (let r = 0; r < rows; r++) {
    if (rowMatch[r]! >= 0) pairs.push([r, rowMatch[r]!]);
    else unmatchedRows.push(r);
  }
  const unmatchedCols: number[] = [];
  for (let c = 0; c < cols; c++) if (!colMatched[c]) unmatchedCols.push(c);
  return { pairs, unmatchedRows, unmatchedCols };
}

/**
 * IoU of two boxes each first grown by `buffer` of its size on every side (C-BIoU, Yang et al.
 * 2023): with detections every few frames or fast motion a prediction can miss its object by
 * more than its own size; the buffer lets them still overlap. buffer 0 is plain IoU.
 */
export function bufferedIou(a: Box, b: Box, buffer: number): number {
  if (buffer <= 0) return iou(a, b);
  const ax0 = a.x - buffer * a.width;
  const ay0 = a.y - buffer * a.height;
  const aw = a.width * (1 + 2 * buffer);
  const ah = a.height * (1 + 2 * buffer);
  const bx0 = b.x - buffer * b.width;
  const by0 = b.y - buffer * b.height;
  const bw = b.width * (1 + 2 * buffer);
  const bh = b.height * (1 + 2 * buffer);
  const iw = Math.min(ax0 + aw, bx0 + bw) - Math.max(ax0, bx0);
  const ih = Math.min(ay0 + ah, by0 + bh) - Math.max(ay0, by0);
  if (iw <= 0 || ih <= 0) return 0;
  const inter = iw * ih;
  return inter / (aw * ah + bw * bh - inter);
}

/** Corners (x0, y0, x1, y1) of boxes grown by `buffer`, packed 4 per box. */
function corners(boxes: readonly Box[], buffer: number): Float64Array {
  const out = new Float64Array(boxes.length * 4);
  for (let i = 0; i < boxes.length; i++) {
    const b = boxes[i]!;
    const gx = Math.max(0, b.width) * buffer;
    const gy = Math.max(0, b.height) * buffer;
    out[4 * i] = b.x - gx;
    out[4 * i + 1] = b.y - gy;
    out[4 * i + 2] = b.x + b.width + gx;
    out[4 * i + 3] = b.y + b.height + gy;
  }
  return out;
}

/**
 * rows x cols matrix (row-major) of bufferedIou(rowBoxes[r], colBoxes[c]); the same numbers as
 * calling it pair by pair. This is the tracker's inner loop, so corners are worked out once per box
 * and, for each row, only the columns whose x range can overlap it are visited (columns sorted by
 * left edge; a column starting more than the widest column's width left of the row cannot reach it).
 */
export function iouMatrix(rowBoxes: readonly Box[], colBoxes: readonly Box[], buffer = 0): Float64Array {
  const rows = rowBoxes.length;
  const cols = colBoxes.length;
  const m = new Float64Array(rows * cols);
  if (rows === 0 || cols === 0) return m;
  const a = corners(rowBoxes, Math.max(0, buffer));
  const b = corners(colBoxes, Math.max(0, buffer));
  const order = Array.from({ length: cols }, (_, i) => i).sort((i, j) => b[4 * i]! - b[4 * j]!);
  const x0s = new Float64Array(cols);
  let widest = 0;
  for (let k = 0; k < cols; k++) {
    const c = order[k]!;
    x0s[k] = b[4 * c]!;
    widest = Math.max(widest, b[4 * c + 2]! - b[4 * c]!);
  }
  /** First k with x0s[k] > x (binary search). */
  const upper = (x: number) => {
    let lo = 0;
    let hi = cols;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (x0s[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  for (let r = 0; r < rows; r++) {
    const ax0 = a[4 * r]!;
    const ay0 = a[4 * r + 1]!;
    const ax1 = a[4 * r + 2]!;
    const ay1 = a[4 * r + 3]!;
    const areaA = Math.max(0, ax1 - ax0) * Math.max(0, ay1 - ay0);
    const end = upper(ax1);
    for (let k = upper(ax0 - widest - 1); k < end; k++) {
      const c = order[k]!;
      const iw = Math.min(ax1, b[4 * c + 2]!) - Math.max(ax0, b[4 * c]!);
      if (iw <= 0) continue;
      const ih = Math.min(ay1, b[4 * c + 3]!) - Math.max(ay0, b[4 * c + 1]!);
      if (ih <= 0) continue;
      const inter = iw * ih;
      const areaB = Math.max(0, b[4 * c + 2]! - b[4 * c]!) * Math.max(0, b[4 * c + 3]! - b[4 * c + 1]!);
      const union = areaA + areaB - inter;
      m[r * cols + c] = union > 0 ? inter / union : 0;
    }
  }
  return m;
}
