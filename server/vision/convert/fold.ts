/**
 * Conversion-time evaluation of small constant expressions (mostly shape arithmetic: Shape of a
 * static tensor, StridedSlice of it, Mul/Pack...). Folding keeps shapes static in the ONNX graph,
 * so later ops (Reshape, Squeeze, GatherNd) know their output shapes.
 */
import { type OnnxGraph, type Value, numbers } from "./onnx-graph";
import type { DType } from "./tfjs-model";

/** Larger constant results are left to onnxruntime's own constant folding. */
export const FOLD_LIMIT = 4096;

export const count = (shape: number[]) => shape.reduce((a, b) => a * b, 1);

export const isStatic = (shape: number[]) => shape.every((d) => d >= 0);

/** NumPy/TF broadcasting of two shapes; -1 where a dim is unknown. */
export function broadcastShape(a: number[], b: number[]): number[] {
  const r = Math.max(a.length, b.length);
  const out: number[] = [];
  for (let k = 0; k < r; k++) {
    const x = a[a.length - r + k] ?? 1;
    const y = b[b.length - r + k] ?? 1;
    if (x === 1) out.push(y);
    else if (y === 1) out.push(x);
    else if (x === -1 || y === -1) out.push(Math.max(x, y));
    else if (x !== y) throw new Error(`shapes [${a}] and [${b}] do not broadcast`);
    else out.push(x);
  }
  return out;
}

function strides(shape: number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let k = shape.length - 1; k >= 0; k--) {
    s[k] = acc;
    acc *= shape[k];
  }
  return s;
}

/** Index into `shape` (right-aligned, broadcast) of the flat output index. */
function broadcastIndexer(from: number[], to: number[]): (flat: number) => number {
  const ts = strides(to);
  const fs = strides(from);
  const off = to.length - from.length;
  return (flat) => {
    let idx = 0;
    for (let k = 0; k < to.length; k++) {
      const coord = Math.floor(flat / ts[k]) % to[k];
      const fk = k - off;
      if (fk >= 0 && from[fk] !== 1) idx += coord * fs[fk];
    }
    return idx;
  };
}

export function foldBinary(g: OnnxGraph, a: Value, b: Value, dtype: DType, fn: (x: number, y: number) => number): Value | null {
  if (!a.data || !b.data) return null;
  const shape = broadcastShape(a.shape, b.shape);
  const n = count(shape);
  if (n > FOLD_LIMIT) return null;
  const av = numbers(a.data);
  const bv = numbers(b.data);
  const ia = broadcastIndexer(a.shape, shape);
  const ib = broadcastIndexer(b.shape, shape);
  const out = new Array<number>(n);
  for (let k = 0; k < n; k++) out[k] = fn(av[ia(k)], bv[ib(k)]);
  return g.constant(dtype, shape, dtype === "float32" ? Float32Array.from(out) : out.map((v) => (dtype === "bool" ? (v ? 1 : 0) : v)));
}

export function foldUnary(g: OnnxGraph, a: Value, dtype: DType, fn: (x: number) => number): Value | null {
  if (!a.data || count(a.shape) > FOLD_LIMIT) return null;
  return g.constant(dtype, a.shape, numbers(a.data).map(fn));
}

/** Same data, new shape (Reshape, ExpandDims, Squeeze of a constant). */
export function reshaped(g: OnnxGraph, a: Value, shape: number[]): Value | null {
  if (!a.data) return null;
  return g.constant(a.dtype, shape, a.data);
}

/** Concatenates constants along `axis` (all ranks equal, static shapes). */
export function foldConcat(g: OnnxGraph, parts: Value[], axis: number): Value | null {
  if (!parts.every((p) => p.data) || parts.some((p) => !isStatic(p.shape))) return null;
  const shape = [...parts[0].shape];
  shape[axis] = parts.reduce((s, p) => s + p.shape[axis], 0);
  if (count(shape) > FOLD_LIMIT) return null;
  const outer = count(shape.slice(0, axis));
  const out: number[] = [];
  for (let o = 0; o < outer; o++) {
    for (const p of parts) {
      const inner = count(p.shape.slice(axis));
      out.push(...numbers(p.data!).slice(o * inner, (o + 1) * inner));
    }
  }
  return g.constant(parts[0].dtype, shape, out);
}

/** Applies TF semantics of integer/float ops in JS. */
export const jsOps: Record<string, (x: number, y: number, isInt: boolean) => number> = {
  Add: (x, y, i) => (i ? (x + y) | 0 : x + y),
  Sub: (x, y, i) => (i ? (x - y) | 0 : x - y),
  Mul: (x, y, i) => (i ? Math.imul(x, y) : Math.fround(x * y)),
  // TF.js divides int32 tensors with floor division.
  Div: (x, y, i) => (i ? Math.floor(x / y) : x / y),
  FloorDiv: (x, y) => Math.floor(x / y),
  FloorMod: (x, y) => x - y * Math.floor(x / y),
  Max: (x, y) => Math.max(x, y),
  Min: (x, y) => Math.min(x, y),
  Pow: (x, y) => x ** y,
  SquaredDifference: (x, y) => (x - y) * (x - y),
  Equal: (x, y) => (x === y ? 1 : 0),
  NotEqual: (x, y) => (x !== y ? 1 : 0),
  Less: (x, y) => (x < y ? 1 : 0),
  LessEqual: (x, y) => (x <= y ? 1 : 0),
  Greater: (x, y) => (x > y ? 1 : 0),
  GreaterEqual: (x, y) => (x >= y ? 1 : 0),
  And: (x, y) => (x && y ? 1 : 0),
  Or: (x, y) => (x || y ? 1 : 0),
};
