/**
 * Custom ONNX detectors: every `*.json` manifest in OBSCURA_MODELS_DIR describes one model (its
 * classes, input size and layout, pre- and post-processing); docs/models.md is the reference.
 *
 * - Manifests are read once per process (lazily, synchronously) and validated with zod; the ONNX
 *   file's declared graph inputs and outputs are read from its protobuf (no session needed) and
 *   checked against the manifest, so `featureSupport()` knows at once what is usable. The session's
 *   own metadata is checked again when the model loads. A bad manifest is logged and skipped, never
 *   thrown at the server; `customModelErrors()` lists the problems.
 * - Input: the image is stretched or letterboxed to the declared size, channels ordered RGB or BGR,
 *   values mapped 0..255 -> `range`, then `(v - mean) / std`, laid out NCHW or NHWC.
 * - Output formats: `yolov8` ([1,4+C,N] or [1,N,4+C]: cx, cy, w, h, class scores), `yolov5`
 *   ([1,N,5+C]: cx, cy, w, h, objectness, class scores), `detections` ([1,N,6]: x1, y1, x2, y2,
 *   score, class; end-to-end exports), `ssd` (boxes [1,N,4] + scores [1,N,C], or scores [1,N] +
 *   class ids [1,N]). Boxes are in input pixels (or normalised), mapped back to image pixels,
 *   clipped, and suppressed per object type by NMS.
 */
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { DETECTION_FEATURES } from "@/lib/api/common";
import { ObscuraError, type ErrorDetail } from "@/lib/errors";
import { clip, nms } from "@/lib/geometry";
import { config } from "../config";
import { log } from "../log";
import { ort, session } from "./onnx";
import { resizeRgb } from "./text-detect";
import { OBJECT_TYPES, type DetectOptions, type Detection, type Detector, type ObjectType, type RgbImage } from "./types";

type DetectionFeature = (typeof DETECTION_FEATURES)[number];

// ---------------------------------------------------------------------------------------------
// Manifest

export const OUTPUT_FORMATS = ["yolov8", "yolov5", "detections", "ssd"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

const list = (xs: readonly string[]) => xs.join(", ");
const NAME_RULE = "must be 1-64 characters of a-z, 0-9 and '-'";

const name = z
  .string({ error: `must be a string that ${NAME_RULE}` })
  .regex(/^[a-z0-9-]{1,64}$/, { error: NAME_RULE });
const tensorName = z.string({ error: "must be a tensor name (a string)" }).min(1, { error: "must not be empty" });
const bool = z.boolean({ error: "must be true or false" });
const unit = z
  .number({ error: "must be a number between 0 and 1" })
  .min(0, { error: "must be between 0 and 1" })
  .max(1, { error: "must be between 0 and 1" });
const side = z
  .number({ error: "must be an integer number of pixels (8-8192)" })
  .int({ error: "must be an integer number of pixels (8-8192)" })
  .min(8, { error: "must be at least 8 pixels" })
  .max(8192, { error: "must be at most 8192 pixels" });
/** A number for all three channels, or one per channel (in the tensor's channel order). */
const perChannel = (what: string) =>
  z.preprocess(
    (v) => (typeof v === "number" ? [v, v, v] : v),
    z.array(z.number({ error: `${what} values must be numbers` }), { error: `must be a number or an array of 3 numbers` }).length(3, {
      error: "must be a number or an array of 3 numbers (one per channel)",
    }),
  );

const classSchema = z.preprocess(
  (v) => (typeof v === "string" ? { type: v } : v),
  z.strictObject(
    {
      type: z.enum(OBJECT_TYPES, { error: `must be one of ${list(OBJECT_TYPES)}` }),
      label: z.string({ error: "must be a string" }).min(1, { error: "must not be empty" }).max(64, { error: "must be at most 64 characters" }).optional(),
    },
    { error: `must be an object type (${list(OBJECT_TYPES)}) or {"type": ..., "label": ...}` },
  ),
);

export const inputSchema = z.strictObject(
  {
    name: tensorName.optional(),
    width: side,
    height: side,
    layout: z.enum(["NCHW", "NHWC"], { error: "must be NCHW or NHWC" }).default("NCHW"),
    channels: z.enum(["RGB", "BGR"], { error: "must be RGB or BGR" }).default("RGB"),
    dtype: z.enum(["float32", "uint8"], { error: "must be float32 or uint8" }).default("float32"),
    range: z
      .tuple([z.number(), z.number()], { error: "must be [low, high]: the values pixel bytes 0 and 255 map to, e.g. [0, 1] or [0, 255]" })
      .refine(([a, b]) => a !== b, { error: "low and high must differ" })
      .default([0, 1]),
    mean: perChannel("mean").default([0, 0, 0]),
    std: perChannel("std")
      .refine((s) => s.every((x) => x !== 0), { error: "must not contain 0" })
      .default([1, 1, 1]),
    resize: z.enum(["stretch", "letterbox"], { error: "must be stretch or letterbox" }).default("letterbox"),
    padValue: z
      .number({ error: "must be an integer 0-255" })
      .int({ error: "must be an integer 0-255" })
      .min(0, { error: "must be an integer 0-255" })
      .max(255, { error: "must be an integer 0-255" })
      .default(114),
  },
  { error: "must be an object with width and height (see docs/models.md)" },
);

const outputSchema = z.strictObject(
  {
    format: z.enum(OUTPUT_FORMATS, { error: `must be one of ${list(OUTPUT_FORMATS)}` }),
    name: tensorName.optional(),
    boxes: tensorName.optional(),
    scores: tensorName.optional(),
    classIds: tensorName.optional(),
    boxFormat: z.enum(["yxyx", "xyxy"], { error: "must be yxyx or xyxy" }).optional(),
    normalized: bool.optional(),
    transposed: bool.optional(),
  },
  { error: `must be an object with a format (${list(OUTPUT_FORMATS)})` },
);

/** Builds the manifest schema; cross-field rules need the engine's feature -> types map. */
function manifestSchema(featureTypes: FeatureTypes) {
  return z
    .strictObject(
      {
        name,
        /** Other tasks (a vehicle make/model classifier) have their own manifests and loaders. */
        task: z.literal("detect", { error: 'must be "detect" here' }).optional(),
        description: z.string({ error: "must be a string" }).max(500, { error: "must be at most 500 characters" }).optional(),
        model: z.string({ error: "must be the ONNX file's path (relative to the manifest)" }).min(1, { error: "must not be empty" }),
        features: z
          .array(z.enum(DETECTION_FEATURES, { error: `must be one of ${list(DETECTION_FEATURES)}` }), {
            error: `must be an array of detection features (${list(DETECTION_FEATURES)})`,
          })
          .min(1, { error: `must name at least one of ${list(DETECTION_FEATURES)}` })
          .refine((f) => new Set(f).size === f.length, { error: "must not repeat a feature" }),
        mode: z.enum(["add", "replace"], { error: "must be add or replace" }).default("add"),
        input: inputSchema,
        output: outputSchema,
        classes: z
          .record(z.string().regex(/^(0|[1-9][0-9]{0,5})$/), classSchema, {
            error: (iss) =>
              iss.code === "invalid_key" ? "is not a class index: keys must be 0, 1, 2..." : 'must be an object mapping class indices to object types, e.g. {"0": "face"}',
          })
          .refine((c) => Object.keys(c).length > 0, { error: "must map at least one class" }),
        scoreThreshold: unit.default(0),
        nmsIou: unit.default(0.5),
      },
      { error: "a manifest must be a JSON object (see docs/models.md)" },
    )
    .superRefine((m, ctx) => {
      const o = m.output;
      const add = (p: (string | number)[], message: string, input?: unknown) => ctx.addIssue({ code: "custom", path: p, message, input });
      if (o.format === "ssd") {
        if (!o.boxes) add(["output", "boxes"], "is required with format ssd (the boxes tensor's name)");
        if (!o.scores) add(["output", "scores"], "is required with format ssd (the scores tensor's name)");
        if (o.name) add(["output", "name"], "is not used with format ssd: name output.boxes and output.scores", o.name);
      } else {
        for (const k of ["boxes", "scores", "classIds", "boxFormat"] as const) {
          if (o[k] !== undefined) add(["output", k], `is only used with format ssd (this is ${o.format}; name its tensor in output.name)`, o[k]);
        }
      }
      if (o.transposed !== undefined && o.format !== "yolov8") add(["output", "transposed"], `is only used with format yolov8 (this is ${o.format})`, o.transposed);
      if (m.input.dtype === "uint8") {
        const raw = m.input.range[0] === 0 && m.input.range[1] === 255 && m.input.mean.every((x) => x === 0) && m.input.std.every((x) => x === 1);
        if (!raw) add(["input", "dtype"], "uint8 inputs take the pixel bytes as they are: range must be [0, 255], mean 0 and std 1", "uint8");
      }
      const served = new Set(m.features.flatMap((f) => featureTypes[f]));
      for (const [k, c] of Object.entries(m.classes)) {
        if (!served.has(c.type)) {
          const owner = DETECTION_FEATURES.filter((f) => featureTypes[f].includes(c.type));
          add(["classes", k, "type"], `belongs to ${list(owner)}, which is not in features [${list(m.features)}]: add it there or remove the class`, c.type);
        }
      }
      const mapped = new Set(Object.values(m.classes).map((c) => c.type));
      for (const [i, f] of m.features.entries()) {
        if (!featureTypes[f].some((t) => mapped.has(t))) add(["features", i], `no class is mapped to ${list(featureTypes[f])}, so the model cannot serve it`, f);
      }
    });
}

export type FeatureTypes = Record<DetectionFeature, readonly ObjectType[]>;
export type Manifest = z.infer<ReturnType<typeof manifestSchema>>;

function fieldOf(p: readonly PropertyKey[]): string {
  let out = "";
  for (const k of p) out += typeof k === "number" ? `[${k}]` : (out ? "." : "") + String(k);
  return out || "(manifest)";
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  if (s === undefined) return String(v);
  return s.length > 80 ? s.slice(0, 77) + "..." : s;
}

function issueDetails(issues: readonly z.core.$ZodIssue[]): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) out.push({ field: fieldOf([...issue.path, key]), problem: "unknown field (see docs/models.md for the allowed ones)" });
      continue;
    }
    if (issue.code === "invalid_union" && issue.errors?.length) {
      out.push(...issueDetails(issue.errors.flat()));
      continue;
    }
    const input = (issue as { input?: unknown }).input;
    const missing = input === undefined && issue.code === "invalid_type";
    out.push({ field: fieldOf(issue.path), problem: missing ? "is required" : input === undefined ? issue.message : `${issue.message} (got ${show(input)})` });
  }
  return out;
}

/** A manifest that cannot be used: the file, and each field with what is wrong and what is allowed. */
export class ManifestError extends ObscuraError {
  constructor(
    readonly file: string,
    details: ErrorDetail[],
  ) {
    super("FAILED_PRECONDITION", `custom model manifest ${file}: ${details.map((d) => `${d.field}: ${d.problem}`).join("; ")}`, { details });
  }
}

// ---------------------------------------------------------------------------------------------
// ONNX graph inputs and outputs, read from the model's protobuf without creating a session

export interface TensorInfo {
  name: string;
  /** onnxruntime's tensor type names: float32, uint8, int64, float16... */
  type: string;
  /** Fixed dims are numbers, symbolic ones strings; null when the model does not say. */
  shape: Array<number | string> | null;
}

export interface OnnxIo {
  inputs: TensorInfo[];
  outputs: TensorInfo[];
}

const ONNX_TYPES: Record<number, string> = {
  1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string", 9: "bool",
  10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128", 16: "bfloat16",
};

/** Positional reads of a file with a small window cache (initializers are skipped, not read). */
class FileBytes {
  private buf = Buffer.alloc(1 << 16);
  private start = 0;
  private end = 0;
  constructor(
    private fd: number,
    readonly size: number,
  ) {}
  byte(pos: number): number {
    if (pos < this.start || pos >= this.end) {
      if (pos >= this.size) throw new Error("truncated protobuf");
      const n = fs.readSync(this.fd, this.buf, 0, this.buf.length, pos);
      this.start = pos;
      this.end = pos + n;
    }
    return this.buf[pos - this.start]!;
  }
  bytes(pos: number, len: number): Buffer {
    if (pos + len > this.size) throw new Error("truncated protobuf");
    const b = Buffer.alloc(len);
    fs.readSync(this.fd, b, 0, len, pos);
    return b;
  }
}

type Source = { byte(pos: number): number; size: number };

function varint(src: Source, pos: number): [number, number] {
  let v = 0;
  let mul = 1;
  for (let k = 0; k < 10; k++) {
    const b = src.byte(pos++);
    v += (b & 0x7f) * mul;
    if (b < 0x80) return [v, pos];
    mul *= 128;
  }
  throw new Error("bad varint");
}

interface Field {
  field: number;
  wire: number;
  /** Varint value, or the payload's length for length-delimited fields. */
  value: number;
  start: number;
  end: number;
}

function* fields(src: Source, start: number, end: number): Generator<Field> {
  let pos = start;
  while (pos < end) {
    const [tag, p] = varint(src, pos);
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    let value = 0;
    let s = p;
    let e: number;
    if (wire === 0) [value, e] = varint(src, p);
    else if (wire === 1) e = p + 8;
    else if (wire === 5) e = p + 4;
    else if (wire === 2) {
      [value, s] = varint(src, p);
      e = s + value;
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
    if (e > end || field === 0) throw new Error("malformed protobuf");
    yield { field, wire, value, start: s, end: e };
    pos = e;
  }
}

const bufSource = (b: Buffer): Source => ({ byte: (p) => b[p] ?? NaN, size: b.length });
const str = (b: Buffer, f: Field) => b.toString("utf8", f.start, f.end);

function valueInfo(b: Buffer): TensorInfo {
  const src = bufSource(b);
  const info: TensorInfo = { name: "", type: "unknown", shape: null };
  for (const f of fields(src, 0, b.length)) {
    if (f.field === 1 && f.wire === 2) info.name = str(b, f);
    if (f.field !== 2 || f.wire !== 2) continue; // TypeProto
    for (const t of fields(src, f.start, f.end)) {
      if (t.field !== 1 || t.wire !== 2) {
        if (t.wire === 2) info.type = "non-tensor";
        continue;
      }
      for (const tt of fields(src, t.start, t.end)) {
        if (tt.field === 1 && tt.wire === 0) info.type = ONNX_TYPES[tt.value] ?? `onnx type ${tt.value}`;
        if (tt.field === 2 && tt.wire === 2) {
          info.shape = [];
          for (const d of fields(src, tt.start, tt.end)) {
            if (d.field !== 1 || d.wire !== 2) continue;
            let dim: number | string = "?";
            for (const x of fields(src, d.start, d.end)) {
              if (x.field === 1 && x.wire === 0) dim = x.value;
              if (x.field === 2 && x.wire === 2) dim = str(b, x);
            }
            info.shape.push(dim);
          }
        }
      }
    }
  }
  return info;
}

/** The graph inputs (without initializers listed as inputs) and outputs of an ONNX file. */
export function readOnnxIo(file: string): OnnxIo {
  const fd = fs.openSync(file, "r");
  try {
    const src = new FileBytes(fd, fs.fstatSync(fd).size);
    let graph: Field | undefined;
    for (const f of fields(src, 0, src.size)) if (f.field === 7 && f.wire === 2) graph = f;
    if (!graph) throw new Error("no graph in the file");
    const inputs: TensorInfo[] = [];
    const outputs: TensorInfo[] = [];
    const initializers = new Set<string>();
    for (const f of fields(src, graph.start, graph.end)) {
      if (f.wire !== 2) continue;
      if (f.field === 11) inputs.push(valueInfo(src.bytes(f.start, f.value)));
      else if (f.field === 12) outputs.push(valueInfo(src.bytes(f.start, f.value)));
      else if (f.field === 5) {
        for (const t of fields(src, f.start, f.end)) if (t.field === 8 && t.wire === 2) initializers.add(src.bytes(t.start, t.value).toString("utf8"));
      }
    }
    if (!outputs.length) throw new Error("the graph has no outputs");
    return { inputs: inputs.filter((i) => !initializers.has(i.name)), outputs };
  } finally {
    fs.closeSync(fd);
  }
}

// ---------------------------------------------------------------------------------------------
// Manifest against the model

/** Tensor names a manifest resolves to. */
export interface ResolvedIo {
  input: string;
  /** yolov8, yolov5, detections: the one output; ssd: boxes, scores and maybe classIds. */
  outputs: { main?: string; boxes?: string; scores?: string; classIds?: string };
}

const NUMERIC_OUTPUTS = ["float32", "float64", "int32", "int64", "uint8", "int8", "uint16", "int16", "uint32"];
const fmtShape = (s: TensorInfo["shape"]) => (s ? `[${s.join(", ")}]` : "unknown");

/**
 * Checks the manifest's input and outputs against the model's (from the file or the session):
 * names, ranks, types, and fixed dims where both sides state them. Throws a ManifestError.
 */
export function checkIo(m: Manifest, io: OnnxIo, file: string, where = "the model"): ResolvedIo {
  const problems: ErrorDetail[] = [];
  const bad = (field: string, problem: string) => problems.push({ field, problem });
  const names = (xs: TensorInfo[]) => xs.map((x) => JSON.stringify(x.name)).join(", ");
  const maxClass = Math.max(...Object.keys(m.classes).map(Number));

  // Input
  let input: TensorInfo | undefined;
  if (m.input.name) {
    input = io.inputs.find((i) => i.name === m.input.name);
    if (!input) bad("input.name", `${JSON.stringify(m.input.name)} is not an input of ${where}; its inputs: ${names(io.inputs)}`);
  } else if (io.inputs.length === 1) input = io.inputs[0];
  else bad("input.name", `is required: ${where} has ${io.inputs.length} inputs (${names(io.inputs)}); name the image input`);
  if (input) {
    if (input.type !== m.input.dtype) {
      const ok = input.type === "float32" || input.type === "uint8";
      bad("input.dtype", ok ? `is ${m.input.dtype}, but input ${JSON.stringify(input.name)} of ${where} is ${input.type}` : `input ${JSON.stringify(input.name)} of ${where} is ${input.type}; only float32 and uint8 inputs are supported`);
    }
    const s = input.shape;
    if (s && s.length !== 4) bad("input", `input ${JSON.stringify(input.name)} of ${where} has shape ${fmtShape(s)}; an image input must have rank 4 (${m.input.layout})`);
    else if (s) {
      const [c, h, w] = m.input.layout === "NCHW" ? [s[1], s[2], s[3]] : [s[3], s[1], s[2]];
      if (typeof c === "number" && c !== 3) bad("input.layout", `is ${m.input.layout}, but input ${JSON.stringify(input.name)} of ${where} has shape ${fmtShape(s)} (${c} channels where ${m.input.layout} puts them)`);
      else {
        if (typeof w === "number" && w !== m.input.width) bad("input.width", `is ${m.input.width}, but input ${JSON.stringify(input.name)} of ${where} has shape ${fmtShape(s)} (${m.input.layout})`);
        if (typeof h === "number" && h !== m.input.height) bad("input.height", `is ${m.input.height}, but input ${JSON.stringify(input.name)} of ${where} has shape ${fmtShape(s)} (${m.input.layout})`);
      }
    }
  }

  // Outputs
  const out: ResolvedIo["outputs"] = {};
  const find = (field: string, wanted: string | undefined, ranks: number[]): TensorInfo | undefined => {
    let t: TensorInfo | undefined;
    if (wanted) {
      t = io.outputs.find((o) => o.name === wanted);
      if (!t) bad(field, `${JSON.stringify(wanted)} is not an output of ${where}; its outputs: ${names(io.outputs)}`);
    } else if (io.outputs.length === 1) t = io.outputs[0];
    else bad(field, `is required: ${where} has ${io.outputs.length} outputs (${names(io.outputs)}); name the one to decode`);
    if (!t) return undefined;
    if (!NUMERIC_OUTPUTS.includes(t.type)) bad(field, `output ${JSON.stringify(t.name)} of ${where} is ${t.type}; supported: ${list(NUMERIC_OUTPUTS)}`);
    if (t.shape && !ranks.includes(t.shape.length)) {
      bad(field, `output ${JSON.stringify(t.name)} of ${where} has shape ${fmtShape(t.shape)}; format ${m.output.format} expects rank ${ranks.join(" or ")}`);
      return undefined;
    }
    return t;
  };
  const last = (t: TensorInfo | undefined) => (t?.shape ? t.shape[t.shape.length - 1] : undefined);
  const f = m.output.format;
  if (f !== "ssd") {
    const t = find("output.name", m.output.name, [2, 3]);
    if (t) out.main = t.name;
    const s = t?.shape;
    if (s) {
      const a = s[s.length - 2];
      const b = s[s.length - 1];
      if (f === "detections" && typeof b === "number" && b !== 6) bad("output.name", `output ${JSON.stringify(t.name)} of ${where} has shape ${fmtShape(s)}; format detections expects [1, N, 6] (x1, y1, x2, y2, score, class)`);
      if (f === "yolov5" && typeof b === "number" && b - 5 <= maxClass) bad(`classes.${maxClass}`, `class ${maxClass} is mapped, but output ${JSON.stringify(t.name)} of ${where} (${fmtShape(s)}, yolov5: 5 + classes) has ${Math.max(0, b - 5)} classes`);
      if (f === "yolov8" && typeof a === "number" && typeof b === "number") {
        const attrs = (m.output.transposed ?? a > b) ? b : a;
        if (attrs - 4 <= maxClass) bad(`classes.${maxClass}`, `class ${maxClass} is mapped, but output ${JSON.stringify(t.name)} of ${where} (${fmtShape(s)}, yolov8: 4 + classes) has ${Math.max(0, attrs - 4)} classes`);
      }
    }
  } else {
    const boxes = find("output.boxes", m.output.boxes, [2, 3]);
    if (boxes) out.boxes = boxes.name;
    if (typeof last(boxes) === "number" && last(boxes) !== 4) bad("output.boxes", `output ${JSON.stringify(boxes!.name)} of ${where} has shape ${fmtShape(boxes!.shape)}; boxes must be [1, N, 4]`);
    const scores = find("output.scores", m.output.scores, m.output.classIds ? [1, 2] : [1, 2, 3]);
    if (scores) out.scores = scores.name;
    if (m.output.classIds) {
      const ids = find("output.classIds", m.output.classIds, [1, 2]);
      if (ids) out.classIds = ids.name;
    } else if (scores?.shape) {
      const c = scores.shape.length === 3 ? scores.shape[2] : 1;
      if (typeof c === "number" && c <= maxClass) bad(`classes.${maxClass}`, `class ${maxClass} is mapped, but output ${JSON.stringify(scores.name)} of ${where} (${fmtShape(scores.shape)}) has ${c} class${c === 1 ? "" : "es"}`);
    }
  }
  if (problems.length) throw new ManifestError(file, problems);
  return { input: input!.name, outputs: out };
}

// ---------------------------------------------------------------------------------------------
// Pre-processing

/** How the image sits in the model input: input px = image px / scale + pad. */
export interface Fit {
  /** Size of the resized image inside the input. */
  width: number;
  height: number;
  padX: number;
  padY: number;
  /** Image pixels per input pixel. */
  scaleX: number;
  scaleY: number;
}

export function fitImage(imageWidth: number, imageHeight: number, inputWidth: number, inputHeight: number, resize: "stretch" | "letterbox"): Fit {
  if (resize === "stretch") return { width: inputWidth, height: inputHeight, padX: 0, padY: 0, scaleX: imageWidth / inputWidth, scaleY: imageHeight / inputHeight };
  const s = Math.min(inputWidth / imageWidth, inputHeight / imageHeight);
  const width = Math.max(1, Math.min(inputWidth, Math.round(imageWidth * s)));
  const height = Math.max(1, Math.min(inputHeight, Math.round(imageHeight * s)));
  return { width, height, padX: Math.floor((inputWidth - width) / 2), padY: Math.floor((inputHeight - height) / 2), scaleX: imageWidth / width, scaleY: imageHeight / height };
}

/** Lays resized RGB bytes (fit.width x fit.height) into the input tensor's buffer (pure). */
export function inputData(rgb: Uint8Array, fit: Fit, spec: Manifest["input"]): Float32Array | Uint8Array {
  const W = spec.width;
  const H = spec.height;
  const plane = W * H;
  const out = spec.dtype === "uint8" ? new Uint8Array(plane * 3) : new Float32Array(plane * 3);
  const [lo, hi] = spec.range;
  // Per tensor channel: the source channel and a byte -> value table.
  const src = spec.channels === "BGR" ? [2, 1, 0] : [0, 1, 2];
  const lut = [0, 1, 2].map((c) => {
    const t = new Float32Array(256);
    for (let v = 0; v < 256; v++) t[v] = spec.dtype === "uint8" ? v : ((v / 255) * (hi - lo) + lo - spec.mean[c]!) / spec.std[c]!;
    return t;
  });
  const nchw = spec.layout === "NCHW";
  if (fit.width !== W || fit.height !== H) {
    for (let c = 0; c < 3; c++) {
      const pad = lut[c]![spec.padValue]!;
      if (nchw) out.fill(pad, c * plane, (c + 1) * plane);
      else for (let i = c; i < out.length; i += 3) out[i] = pad;
    }
  }
  for (let y = 0; y < fit.height; y++) {
    for (let x = 0; x < fit.width; x++) {
      const s = (y * fit.width + x) * 3;
      const p = (y + fit.padY) * W + x + fit.padX;
      for (let c = 0; c < 3; c++) out[nchw ? c * plane + p : p * 3 + c] = lut[c]![rgb[s + src[c]!]!]!;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Decoding (pure): candidates in input pixels

export interface OutTensor {
  data: ArrayLike<number>;
  dims: readonly number[];
}

export interface Candidate {
  cls: number;
  score: number;
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

export interface DecodeOptions {
  threshold: number;
  /** Class indices that are mapped (others are ignored). */
  classes: readonly number[];
  /** Boxes normalised to 0..1 of the input: multiplied by the input size. */
  normalized: boolean;
  inputWidth: number;
  inputHeight: number;
  /** yolov8 only: true for [1, N, 4+C], false for [1, 4+C, N]; default: the larger dim is N. */
  transposed?: boolean;
}

function decodeError(problem: string): never {
  throw new ObscuraError("FAILED_PRECONDITION", problem);
}

function checkClasses(classes: readonly number[], count: number, what: string) {
  const over = classes.filter((c) => c >= count);
  if (over.length) decodeError(`${what} has ${count} classes, but class ${over.join(", ")} is mapped`);
}

/** Best mapped class of row `i`: `score(i, c)` over the mapped classes. */
function best(classes: readonly number[], score: (c: number) => number): [number, number] {
  let cls = -1;
  let top = -Infinity;
  for (const c of classes) {
    const s = score(c);
    if (s > top) [cls, top] = [c, s];
  }
  return [cls, top];
}

const centre = (cls: number, score: number, cx: number, cy: number, w: number, h: number, sx: number, sy: number): Candidate => ({
  cls,
  score,
  x1: (cx - w / 2) * sx,
  y1: (cy - h / 2) * sy,
  x2: (cx + w / 2) * sx,
  y2: (cy + h / 2) * sy,
});

/**
 * YOLOv8-v11 heads: [1, 4+C, N] (or transposed [1, N, 4+C]): cx, cy, w, h, C class scores.
 * Unless `transposed` says, the larger of the two dims is N (8,400 boxes at 640x640).
 */
export function decodeYolov8(t: OutTensor, o: DecodeOptions): Candidate[] {
  const [d1, d2] = t.dims.slice(-2) as [number, number];
  const transposed = o.transposed ?? d1 > d2;
  const [n, attrs] = transposed ? [d1, d2] : [d2, d1];
  if (attrs < 5) decodeError(`yolov8 output [${t.dims}] needs 4 + classes values per box`);
  checkClasses(o.classes, attrs - 4, `yolov8 output [${t.dims}]`);
  const at = transposed ? (a: number, i: number) => t.data[i * attrs + a]! : (a: number, i: number) => t.data[a * n + i]!;
  const [sx, sy] = o.normalized ? [o.inputWidth, o.inputHeight] : [1, 1];
  const out: Candidate[] = [];
  for (let i = 0; i < n; i++) {
    const [cls, score] = best(o.classes, (c) => at(4 + c, i));
    if (!(score >= o.threshold)) continue;
    out.push(centre(cls, score, at(0, i), at(1, i), at(2, i), at(3, i), sx, sy));
  }
  return out;
}

/** YOLOv5/v7 heads: [1, N, 5+C]: cx, cy, w, h, objectness, C class scores (score = obj x class). */
export function decodeYolov5(t: OutTensor, o: DecodeOptions): Candidate[] {
  const attrs = t.dims[t.dims.length - 1]!;
  if (attrs < 6) decodeError(`yolov5 output [${t.dims}] needs 5 + classes values per box`);
  checkClasses(o.classes, attrs - 5, `yolov5 output [${t.dims}]`);
  const [sx, sy] = o.normalized ? [o.inputWidth, o.inputHeight] : [1, 1];
  const out: Candidate[] = [];
  for (let r = 0; r + attrs <= t.data.length; r += attrs) {
    const obj = t.data[r + 4]!;
    if (!(obj >= o.threshold)) continue;
    const [cls, score] = best(o.classes, (c) => obj * t.data[r + 5 + c]!);
    if (!(score >= o.threshold)) continue;
    out.push(centre(cls, score, t.data[r]!, t.data[r + 1]!, t.data[r + 2]!, t.data[r + 3]!, sx, sy));
  }
  return out;
}

/** Decoded rows [1, N, 6]: x1, y1, x2, y2, score, class (YOLOv10, NMS-included exports, CenterNet). */
export function decodeDetections(t: OutTensor, o: DecodeOptions): Candidate[] {
  const attrs = t.dims[t.dims.length - 1]!;
  if (attrs !== 6) decodeError(`detections output [${t.dims}] must be [1, N, 6] (x1, y1, x2, y2, score, class)`);
  const wanted = new Set(o.classes);
  const [sx, sy] = o.normalized ? [o.inputWidth, o.inputHeight] : [1, 1];
  const out: Candidate[] = [];
  for (let r = 0; r + 6 <= t.data.length; r += 6) {
    const score = t.data[r + 4]!;
    const cls = Math.round(t.data[r + 5]!);
    if (!(score >= o.threshold) || !wanted.has(cls)) continue;
    out.push({ cls, score, x1: t.data[r]! * sx, y1: t.data[r + 1]! * sy, x2: t.data[r + 2]! * sx, y2: t.data[r + 3]! * sy });
  }
  return out;
}

/**
 * SSD-style outputs: boxes [1, N, 4] (`yxyx`: ymin, xmin, ymax, xmax, or `xyxy`) with scores
 * [1, N, C] (best mapped class per box), scores [1, N] (one class: 0), or scores [1, N] and
 * class ids [1, N].
 */
export function decodeSsd(boxes: OutTensor, scores: OutTensor, classIds: OutTensor | null, o: DecodeOptions & { boxFormat: "yxyx" | "xyxy" }): Candidate[] {
  if (boxes.dims[boxes.dims.length - 1] !== 4) decodeError(`ssd boxes [${boxes.dims}] must be [1, N, 4]`);
  const n = boxes.data.length / 4;
  const c = scores.data.length / n;
  if (!Number.isInteger(c) || c < 1) decodeError(`ssd scores [${scores.dims}] do not match ${n} boxes`);
  if (classIds && (c !== 1 || classIds.data.length !== n)) decodeError(`ssd scores [${scores.dims}] and class ids [${classIds.dims}] must both be [1, N] with N = ${n} boxes`);
  if (!classIds) checkClasses(o.classes, c, `ssd scores [${scores.dims}]`);
  const wanted = new Set(o.classes);
  const [sx, sy] = o.normalized ? [o.inputWidth, o.inputHeight] : [1, 1];
  const yx = o.boxFormat === "yxyx";
  const out: Candidate[] = [];
  for (let i = 0; i < n; i++) {
    let cls: number;
    let score: number;
    if (classIds) {
      cls = Math.round(classIds.data[i]!);
      score = scores.data[i]!;
      if (!wanted.has(cls)) continue;
    } else [cls, score] = best(o.classes, (k) => scores.data[i * c + k]!);
    if (!(score >= o.threshold)) continue;
    const b = i * 4;
    const [a0, a1, a2, a3] = [boxes.data[b]!, boxes.data[b + 1]!, boxes.data[b + 2]!, boxes.data[b + 3]!];
    out.push(yx ? { cls, score, x1: a1 * sx, y1: a0 * sy, x2: a3 * sx, y2: a2 * sy } : { cls, score, x1: a0 * sx, y1: a1 * sy, x2: a2 * sx, y2: a3 * sy });
  }
  return out;
}

type ClassMap = ReadonlyMap<number, { type: ObjectType; label?: string }>;

/** Candidates (input pixels) -> detections in image pixels: un-fit, clip, NMS per object type. */
export function toDetections(cands: readonly Candidate[], classes: ClassMap, fit: Fit, imageWidth: number, imageHeight: number, nmsIou: number): Detection[] {
  const byType = new Map<ObjectType, Detection[]>();
  for (const k of cands) {
    const cls = classes.get(k.cls);
    if (!cls) continue;
    const x1 = (Math.min(k.x1, k.x2) - fit.padX) * fit.scaleX;
    const y1 = (Math.min(k.y1, k.y2) - fit.padY) * fit.scaleY;
    const x2 = (Math.max(k.x1, k.x2) - fit.padX) * fit.scaleX;
    const y2 = (Math.max(k.y1, k.y2) - fit.padY) * fit.scaleY;
    const box = clip({ x: x1, y: y1, width: x2 - x1, height: y2 - y1 }, imageWidth, imageHeight);
    if (!(box.width >= 1 && box.height >= 1)) continue;
    const d: Detection = { type: cls.type, score: k.score, box, ...(cls.label ? { label: cls.label } : {}) };
    byType.set(cls.type, [...(byType.get(cls.type) ?? []), d]);
  }
  return [...byType.values()].flatMap((l) => nms(l, nmsIou));
}

// ---------------------------------------------------------------------------------------------
// The detector

function numeric(t: ort.Tensor): OutTensor {
  const d = t.data;
  if (d instanceof BigInt64Array || d instanceof BigUint64Array) return { data: Float64Array.from(d, Number), dims: t.dims };
  if (Array.isArray(d) || typeof d[0] === "string") throw new ObscuraError("FAILED_PRECONDITION", `output of type ${t.type} is not numeric`);
  return { data: d as ArrayLike<number>, dims: t.dims };
}

export class CustomDetector implements Detector {
  readonly name: string;
  readonly types: readonly ObjectType[];
  private readonly classes: ClassMap;
  private loading?: Promise<ort.InferenceSession>;

  constructor(
    readonly manifest: Manifest,
    /** The manifest's path. */
    readonly file: string,
    readonly modelFile: string,
    readonly io: ResolvedIo,
    private readonly onFail: (e: Error) => void = () => {},
  ) {
    this.name = manifest.name;
    this.classes = new Map(Object.entries(manifest.classes).map(([k, v]) => [Number(k), v]));
    this.types = [...new Set([...this.classes.values()].map((c) => c.type))];
  }

  /** The shared session, its inputs and outputs checked against the manifest once. */
  load(): Promise<ort.InferenceSession> {
    return (this.loading ??= (async () => {
      try {
        const s = await session(this.modelFile);
        const meta = (xs: readonly ort.InferenceSession.ValueMetadata[]): TensorInfo[] =>
          xs.map((x) => ({ name: x.name, type: x.isTensor ? x.type : "non-tensor", shape: x.isTensor && x.shape.length ? [...x.shape] : null }));
        checkIo(this.manifest, { inputs: meta(s.inputMetadata), outputs: meta(s.outputMetadata) }, path.basename(this.file), "the ONNX session");
        return s;
      } catch (e) {
        const err =
          e instanceof ManifestError
            ? e
            : new ManifestError(path.basename(this.file), [{ field: "model", problem: `onnxruntime cannot load ${this.modelFile}: ${(e as Error).message}` }]);
        this.onFail(err);
        throw err;
      }
    })());
  }

  async detect(image: RgbImage, opts: DetectOptions): Promise<Detection[]> {
    const s = await this.load();
    const m = this.manifest;
    const fit = fitImage(image.width, image.height, m.input.width, m.input.height, m.input.resize);
    const rgb = await resizeRgb(image, fit.width, fit.height, "linear");
    const dims = m.input.layout === "NCHW" ? [1, 3, m.input.height, m.input.width] : [1, m.input.height, m.input.width, 3];
    const input = new ort.Tensor(m.input.dtype, inputData(rgb, fit, m.input), dims);
    const names = [this.io.outputs.main, this.io.outputs.boxes, this.io.outputs.scores, this.io.outputs.classIds].filter((x): x is string => !!x);
    const r = await s.run({ [this.io.input]: input }, names);
    const o: DecodeOptions = {
      threshold: Math.max(opts.threshold, m.scoreThreshold),
      classes: [...this.classes.keys()],
      normalized: m.output.normalized ?? m.output.format === "ssd",
      inputWidth: m.input.width,
      inputHeight: m.input.height,
      transposed: m.output.transposed,
    };
    const out = (n: string | undefined) => (n ? numeric(r[n]!) : null);
    let cands: Candidate[];
    try {
      if (m.output.format === "yolov8") cands = decodeYolov8(out(this.io.outputs.main)!, o);
      else if (m.output.format === "yolov5") cands = decodeYolov5(out(this.io.outputs.main)!, o);
      else if (m.output.format === "detections") cands = decodeDetections(out(this.io.outputs.main)!, o);
      else cands = decodeSsd(out(this.io.outputs.boxes)!, out(this.io.outputs.scores)!, out(this.io.outputs.classIds), { ...o, boxFormat: m.output.boxFormat ?? "yxyx" });
    } catch (e) {
      throw new ObscuraError("FAILED_PRECONDITION", `custom model "${m.name}" (${path.basename(this.file)}): ${(e as Error).message}`);
    }
    return toDetections(cands, this.classes, fit, image.width, image.height, m.nmsIou);
  }
}

// ---------------------------------------------------------------------------------------------
// The registry

export interface CustomModel {
  name: string;
  /** The manifest's path. */
  file: string;
  features: DetectionFeature[];
  mode: "add" | "replace";
  detector: CustomDetector;
}

interface Registry {
  dir: string | null;
  models: CustomModel[];
  errors: ManifestError[];
}

const KEY = Symbol.for("obscura.vision.customModels");
type Holder = { [KEY]?: Registry };

export interface LoadOptions {
  /** Names taken by built-in detectors. */
  reserved: readonly string[];
  /** The engine's feature -> object types map. */
  featureTypes: FeatureTypes;
}

/** Reads and checks one manifest; throws a ManifestError. */
export function loadManifest(file: string, opts: LoadOptions, taken: ReadonlyMap<string, string> = new Map()): Omit<CustomModel, "detector"> & { manifest: Manifest; modelFile: string; io: ResolvedIo } {
  const base = path.basename(file);
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    throw new ManifestError(base, [{ field: "(manifest)", problem: `is not valid JSON: ${(e as Error).message}` }]);
  }
  const r = manifestSchema(opts.featureTypes).safeParse(json, { reportInput: true });
  if (!r.success) throw new ManifestError(base, issueDetails(r.error.issues));
  const m = r.data;
  if (opts.reserved.includes(m.name)) throw new ManifestError(base, [{ field: "name", problem: `${JSON.stringify(m.name)} is the name of a built-in detector; choose another` }]);
  const other = taken.get(m.name);
  if (other) throw new ManifestError(base, [{ field: "name", problem: `${JSON.stringify(m.name)} is already used by ${other}; names must be unique` }]);
  const modelFile = path.resolve(path.dirname(file), m.model);
  if (!fs.existsSync(modelFile) || !fs.statSync(modelFile).isFile()) {
    throw new ManifestError(base, [{ field: "model", problem: `${show(m.model)} is not a file (looked for ${modelFile}; paths are relative to the manifest)` }]);
  }
  let io: OnnxIo;
  try {
    io = readOnnxIo(modelFile);
  } catch (e) {
    throw new ManifestError(base, [{ field: "model", problem: `${modelFile} is not a readable ONNX model (${(e as Error).message})` }]);
  }
  const resolved = checkIo(m, io, base);
  return { name: m.name, file, features: m.features, mode: m.mode, manifest: m, modelFile, io: resolved };
}

function load(dir: string | null, opts: LoadOptions): Registry {
  const reg: Registry = { dir, models: [], errors: [] };
  if (!dir) return reg;
  let files: string[];
  try {
    files = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(".json"))
      .sort();
  } catch (e) {
    const err = new ManifestError(dir, [{ field: "OBSCURA_MODELS_DIR", problem: `cannot be read: ${(e as Error).message}` }]);
    log.error("custom models not loaded", { dir, error: err.message });
    reg.errors.push(err);
    return reg;
  }
  const taken = new Map<string, string>();
  for (const f of files) {
    const file = path.join(dir, f);
    if (manifestTask(file) !== "detect") continue; // another loader's (server/vehicle/make-model.ts)
    try {
      const e = loadManifest(file, opts, taken);
      taken.set(e.name, f);
      const model: CustomModel = {
        name: e.name,
        file,
        features: e.features,
        mode: e.mode,
        detector: new CustomDetector(e.manifest, file, e.modelFile, e.io, (err) => {
          // A model that onnxruntime cannot run is dropped for the rest of the process.
          reg.models = reg.models.filter((x) => x !== model);
          reg.errors.push(err as ManifestError);
          log.error("custom model skipped", { manifest: file, error: err.message });
        }),
      };
      reg.models.push(model);
      log.info("custom model", { name: e.name, manifest: file, features: e.features, mode: e.mode, format: e.manifest.output.format });
    } catch (e) {
      const err = e instanceof ManifestError ? e : new ManifestError(f, [{ field: "(manifest)", problem: (e as Error).message }]);
      reg.errors.push(err);
      log.error("custom model skipped", { manifest: file, error: err.message });
    }
  }
  return reg;
}

/** The `task` a manifest declares ("detect" when absent or unreadable: the detector loader reports the problem). */
export function manifestTask(file: string): string {
  try {
    const j = JSON.parse(fs.readFileSync(file, "utf8")) as { task?: unknown };
    return typeof j?.task === "string" ? j.task : "detect";
  } catch {
    return "detect";
  }
}

function registry(opts: LoadOptions): Registry {
  const g = globalThis as Holder;
  const dir = config().modelsDir;
  if (!g[KEY] || g[KEY].dir !== dir) g[KEY] = load(dir, opts);
  return g[KEY];
}

/** The usable custom models of OBSCURA_MODELS_DIR (read once per process and directory). */
export function customModels(opts: LoadOptions): readonly CustomModel[] {
  return registry(opts).models;
}

/** Problems of the manifests that were skipped (each also logged). */
export function customModelErrors(opts: LoadOptions): readonly ManifestError[] {
  return registry(opts).errors;
}

/** Creates the custom models' sessions ahead of the first job; failures are logged and dropped. */
export async function loadCustomModels(opts: LoadOptions): Promise<void> {
  for (const m of [...customModels(opts)]) await m.detector.load().catch(() => {});
}

/** Forgets the loaded manifests (tests; a changed OBSCURA_MODELS_DIR is noticed on its own). */
export function resetCustomModels(): void {
  delete (globalThis as Holder)[KEY];
}
