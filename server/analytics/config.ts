/**
 * The analytics pipeline's configuration (docs/pipeline.md): every parameter of the spec's
 * "Pipeline parameters" section with its name and default, read from YAML or JSON, checked before
 * the pipeline starts. A bad value is refused naming the parameter, the value and what is allowed.
 *
 * The entry point is the spec's module (VehicleAnalyticsFile.yaml ... VehicleAnalyticsImageLoop.yaml,
 * or its short name File, RTSP, GstRTSP, GstFile, FolderWatch, Direct, ImageLoop) given as
 * `entryPoint`; without it, VIDEO_IN decides: an rtsp:// URL is RTSP, a folder FolderWatch, a file
 * File. The GStreamer entry points run on ffmpeg: GstRTSP is RTSP, GstFile is File.
 */
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";
import { z } from "zod";
import { ObscuraError } from "@/lib/errors";
import { isPrefixUri, redactUri, uriProblem } from "@/lib/storage-uri";
import { vehicleParamsShape, zodDetails } from "../vehicle/params";

export const ENTRY_POINTS = ["File", "RTSP", "GstRTSP", "GstFile", "FolderWatch", "Direct", "ImageLoop"] as const;
export type EntryPoint = (typeof ENTRY_POINTS)[number];
/** How each entry point runs here (the GStreamer ones on ffmpeg). */
export const SOURCE_OF: Record<EntryPoint, "file" | "rtsp" | "folder" | "direct" | "loop"> = {
  File: "file",
  GstFile: "file",
  RTSP: "rtsp",
  GstRTSP: "rtsp",
  FolderWatch: "folder",
  Direct: "direct",
  ImageLoop: "loop",
};

export const DEBUG_SETTINGS = ["eventAnalytics", "OSD", "dumpJson", "printJson", "json", "log", "filteringDebug", "history"] as const;
export const TRACKER_TYPES = ["cpuBest", "cpuFast", "cpuFaster", "cpuFastest"] as const;
export const METACLASSES = ["licensePlates", "vehicles", "people", "all"] as const;
/** The spec's classes, and ours: person (counted by the same detector; outputs gain metaClasses.people). */
export const PIPELINE_CLASSES = ["car", "licenseplate", "bus", "truck", "motorbike", "person"] as const;

const bool = (name: string) => z.boolean({ error: `${name} must be true or false` });
const str = (name: string, what = "a string") => z.string({ error: `${name} must be ${what}` });
const int = (name: string, min: number, max: number, unit = "") =>
  z
    .number({ error: `${name} must be a whole number from ${min} to ${max}${unit}` })
    .int({ error: `${name} must be a whole number from ${min} to ${max}${unit}` })
    .min(min, { error: `${name} must be at least ${min}${unit}` })
    .max(max, { error: `${name} must be at most ${max}${unit}` });
/** A comma-separated list (the spec's form) or a YAML/JSON list, each entry one of `allowed`. */
const list = <T extends string>(name: string, allowed: readonly T[]) =>
  z.preprocess(
    (v) => (typeof v === "string" ? v.split(",").map((s) => s.trim()).filter(Boolean) : v),
    z.array(z.enum(allowed as unknown as [T, ...T[]], { error: `each entry of ${name} must be one of ${allowed.join(", ")}` }), { error: `${name} must be a comma-separated list of ${allowed.join(", ")}` }),
  );
const paths = (name: string) =>
  z.preprocess((v) => (typeof v === "string" ? v.split(",").map((s) => s.trim()).filter(Boolean) : v), z.array(z.string(), { error: `${name} must be a comma-separated list of module paths` }));

export const pipelineShape = {
  ...vehicleParamsShape,
  enabledClasses: list("enabledClasses", PIPELINE_CLASSES).default(["car", "licenseplate", "bus", "truck", "motorbike"]),
  entryPoint: z.string().optional(),
  VIDEO_IN: str("VIDEO_IN", "a file, a folder or an rtsp:// URL").default(""),
  detectionModel: str("detectionModel", "a model name such as gen7es").default("gen7es"),
  imageSaveDir: str("imageSaveDir", "a folder path").default(""),
  imageWriterFormat: z.enum(["jpg", "png"], { error: "imageWriterFormat must be jpg or png" }).default("jpg"),
  useTracker: bool("useTracker").default(false),
  trackerType: z.enum(TRACKER_TYPES, { error: `trackerType must be one of ${TRACKER_TYPES.join(", ")}` }).default("cpuFaster"),
  useComboVehicleModel: bool("useComboVehicleModel").default(false),
  comboVehicleModelMode: str("comboVehicleModelMode").default(""),
  debugSettings: list("debugSettings", DEBUG_SETTINGS).default([]),
  // update strategy
  updateAllowEmptyJSON: bool("updateAllowEmptyJSON").default(false),
  updateMinFrequencyMs: int("updateMinFrequencyMs", 0, 86_400_000, " ms").default(0),
  /** Default true; false for FolderWatch (applied in pipelineConfig). */
  updateOnlyOnChange: bool("updateOnlyOnChange").optional(),
  updateOnlyOnEvents: bool("updateOnlyOnEvents").default(false),
  updateOnMetaclassCountChange: list("updateOnMetaclassCountChange", METACLASSES).default([]),
  updateOnStart: bool("updateOnStart").default(true),
  updateResetStateOnNewInput: bool("updateResetStateOnNewInput").default(true),
  // plates over time
  lptModel: str("lptModel", "a model name such as gen7es").default("gen7es"),
  lptStabilizationDelay: int("lptStabilizationDelay", 0, 10_000, " frames").default(0),
  lptStabilizationStrategy: z.enum(["", "remove", "update"], { error: "lptStabilizationStrategy must be remove, update or empty" }).default(""),
  lptStringMergeWindow: int("lptStringMergeWindow", 0, 100_000, " frames").default(30),
  mmcFilterDefinitions: str("mmcFilterDefinitions", "a file path").default(""),
  boxFilterConfig: z.union([z.string(), z.array(z.unknown())], { error: "boxFilterConfig must be the path of a JSON list of filters (or the list)" }).default(""),
  extensionModules: paths("extensionModules").default([]),
  // debug and performance
  debugRawResultsPrefix: str("debugRawResultsPrefix", "a path prefix").default(""),
  performanceInfo: bool("performanceInfo").default(false),
  includeAverageHardware: bool("includeAverageHardware").default(false),
  performanceCSVFile: str("performanceCSVFile", "a file path").default(""),
  /** The spec's default is /data/tmp; here `<OBSCURA_DATA_DIR>/tmp` when empty. */
  debugOutputPath: str("debugOutputPath", "a folder path").default(""),
  debugSaveFormat: z.enum(["json", "csv"], { error: "debugSaveFormat must be json or csv" }).default("json"),
  sensorsConfigFile: z.union([z.string(), z.record(z.string(), z.unknown())], { error: "sensorsConfigFile must be the path of a sensors file (or the sensors object)" }).default(""),
  // AMQP
  amqpUseSsl: bool("amqpUseSsl").default(false),
  amqpHost: str("amqpHost", "a host name").default(""),
  amqpPort: int("amqpPort", 0, 65535).default(0),
  amqpMaxRetries: int("amqpMaxRetries", 0, 1000).default(5),
  amqpUser: str("amqpUser").default(""),
  amqpPassword: str("amqpPassword").default(""),
  amqpExchange: str("amqpExchange", "an exchange name").default(""),
  amqpRoutingKey: str("amqpRoutingKey", "a routing key").default("sio"),
  amqpErrorOnFailure: bool("amqpErrorOnFailure").default(false),
  // File
  outputPrefix: str("outputPrefix", "a path prefix").default(""),
  // RTSP
  hardwareDecoderType: str("hardwareDecoderType", "an ffmpeg -hwaccel name or None").default(""),
  resizeToSize: int("resizeToSize", 0, 4320, " pixels").default(720),
  maxQueueSize: int("maxQueueSize", 0, 10_000, " frames").default(200),
  /** RTSP default 20; File and FolderWatch analyse every frame unless it is set. */
  fpsLimit: z.number({ error: "fpsLimit must be a number of frames per second" }).min(0, { error: "fpsLimit must be 0 (no limit) or more" }).max(240, { error: "fpsLimit must be at most 240" }).optional(),
  recordTo: str("recordTo", "a folder path").default(""),
  recordInterval: int("recordInterval", 1000, 3_600_000, " ms").default(5000),
  rtspTimeoutMs: int("rtspTimeoutMs", 100, 600_000, " ms").default(5000),
  rtspRetryCount: int("rtspRetryCount", 0, 1_000_000).default(3),
  rtspUseTCP: bool("rtspUseTCP").default(true),
  // ours (docs/pipeline.md)
  /** ImageLoop: how many times the image is analysed (0: until stopped). */
  loopCount: int("loopCount", 0, 100_000_000).default(100),
  /** FolderWatch: how often the folder is scanned, and how long an idle folder is watched (0: until stopped). */
  watchPollMs: int("watchPollMs", 50, 60_000, " ms").default(500),
  watchIdleStopMs: int("watchIdleStopMs", 0, 86_400_000, " ms").default(0),
  /** Events' time origin: ISO 8601 (File: the run's start by default; RTSP and folders use the clock). */
  startTime: z.string().optional(),
  /** Store sensor events in the database (default true) and, with saveEventImages, their frame and box images. */
  storeEvents: bool("storeEvents").default(true),
  saveEventImages: bool("saveEventImages").default(false),
  /** Where event images go (a folder: file://, s3://, an Azure URL with a SAS signature); default OBSCURA_DATA_DIR/analytics-media. */
  eventImageUri: str("eventImageUri", "a storage URI")
    .default("")
    .superRefine((v, ctx) => {
      const problem = v === "" ? null : uriProblem(v, "output");
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    // a folder of images: "s3://b/events" and "s3://b/events/" alike (a SAS query string stays at the end)
    .transform((v) => (v === "" || isPrefixUri(v) ? v : v.replace(/^([^?]*)/, "$1/"))),
};

const schema = z.object(pipelineShape).strict();
export type RawPipelineConfig = z.output<typeof schema>;

export interface PipelineConfig extends Omit<RawPipelineConfig, "updateOnlyOnChange" | "entryPoint" | "fpsLimit"> {
  entryPoint: EntryPoint;
  source: (typeof SOURCE_OF)[EntryPoint];
  updateOnlyOnChange: boolean;
  /** Frames analysed per second at most (0: every frame). */
  fpsLimit: number;
  lptStabilizationStrategy: "remove" | "update";
  /** The configuration file's path (given to extension modules' configure), "" when built in code. */
  configPath: string;
}

const ENTRY_ALIASES = new Map<string, EntryPoint>(ENTRY_POINTS.flatMap((e) => [[e.toLowerCase(), e] as const, [`vehicleanalytics${e.toLowerCase()}.yaml`, e] as const, [`vehicleanalytics${e.toLowerCase()}`, e] as const]));

/** Typed values from text ("true", "20") for parameters that are booleans or numbers (YAML written by hand, env). */
function coerce(input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    const def = (pipelineShape as Record<string, z.ZodType>)[k];
    if (typeof v === "string" && def) {
      const probe = def.safeParse(undefined);
      const t = probe.success ? typeof probe.data : undefined;
      const wantsBool = t === "boolean" || k === "updateOnlyOnChange";
      const wantsNumber = t === "number" || k === "fpsLimit";
      if (wantsBool && /^(true|false)$/i.test(v)) {
        out[k] = v.toLowerCase() === "true";
        continue;
      }
      if (wantsNumber && v.trim() !== "" && Number.isFinite(Number(v))) {
        out[k] = Number(v);
        continue;
      }
    }
    out[k] = v;
  }
  return out;
}

/** Reads a YAML or JSON configuration file (YAML is a superset of JSON). */
export function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(/*turbopackIgnore: true*/ file, "utf8");
  } catch (e) {
    throw new ObscuraError("INVALID_ARGUMENT", `the pipeline configuration ${file} cannot be read: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (e) {
    throw new ObscuraError("INVALID_ARGUMENT", `the pipeline configuration ${file} is not valid YAML or JSON: ${(e as Error).message}`);
  }
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) throw new ObscuraError("INVALID_ARGUMENT", `the pipeline configuration ${file} must be a mapping of parameter names to values`);
  return doc as Record<string, unknown>;
}

/**
 * Checks a configuration (an object, or the path of a YAML/JSON file) and applies the defaults.
 * Throws INVALID_ARGUMENT naming the parameter, its value and what is allowed; `details` lists all.
 */
export function pipelineConfig(input: unknown, opts: { where?: string; configPath?: string; requireInput?: boolean } = {}): PipelineConfig {
  let configPath = opts.configPath ?? "";
  let raw = input;
  if (typeof input === "string") {
    configPath = path.resolve(input);
    raw = readConfigFile(input);
  }
  const where = opts.where ?? (configPath || "pipeline configuration");
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new ObscuraError("INVALID_ARGUMENT", `${where} must be a mapping of pipeline parameters`);
  const obj = coerce(raw as Record<string, unknown>);
  const r = schema.safeParse(obj);
  if (!r.success) {
    const unknownKeys = r.error.issues.filter((i) => i.code === "unrecognized_keys").flatMap((i) => (i as { keys: string[] }).keys);
    if (unknownKeys.length) {
      throw new ObscuraError("INVALID_ARGUMENT", `${where}: ${unknownKeys.join(", ")} ${unknownKeys.length > 1 ? "are not pipeline parameters" : "is not a pipeline parameter"} (docs/pipeline.md lists them)`, {
        details: unknownKeys.map((k) => ({ field: k, problem: "is not a pipeline parameter" })),
      });
    }
    const details = zodDetails(r.error, obj);
    throw new ObscuraError("INVALID_ARGUMENT", `${where}: ${details.map((d) => `${d.field}: ${d.problem}`).join("; ")}`, { details });
  }
  const c = r.data;
  const fail = (field: string, problem: string) => {
    throw new ObscuraError("INVALID_ARGUMENT", `${where}: ${field}: ${problem}`, { details: [{ field, problem }] });
  };
  if (c.lptMinCharacters > c.lptMaxCharacters) fail("lptMinCharacters", `${c.lptMinCharacters} must not exceed lptMaxCharacters (${c.lptMaxCharacters})`);
  let entryPoint: EntryPoint;
  if (c.entryPoint !== undefined) {
    const e = ENTRY_ALIASES.get(c.entryPoint.toLowerCase());
    if (!e) fail("entryPoint", `${JSON.stringify(c.entryPoint)} is not an entry point; allowed: ${ENTRY_POINTS.map((x) => `${x} (VehicleAnalytics${x}.yaml)`).join(", ")}`);
    entryPoint = e!;
  } else if (/^rtsps?:\/\//i.test(c.VIDEO_IN)) entryPoint = "RTSP";
  else if (c.VIDEO_IN && fs.existsSync(c.VIDEO_IN) && fs.statSync(c.VIDEO_IN).isDirectory()) entryPoint = "FolderWatch";
  else entryPoint = "File";
  const source = SOURCE_OF[entryPoint];
  const requireInput = opts.requireInput ?? source !== "direct";
  if (requireInput) {
    if (!c.VIDEO_IN) fail("VIDEO_IN", `is required by the ${entryPoint} entry point: ${source === "rtsp" ? "an rtsp:// URL" : source === "folder" ? "the folder to watch" : "a video or image file"}`);
    if (source === "rtsp" && !/^rtsps?:\/\//i.test(c.VIDEO_IN)) fail("VIDEO_IN", `${JSON.stringify(c.VIDEO_IN)} is not an rtsp:// URL (the ${entryPoint} entry point reads a camera stream)`);
    if ((source === "file" || source === "loop") && !(fs.existsSync(c.VIDEO_IN) && fs.statSync(c.VIDEO_IN).isFile())) fail("VIDEO_IN", `${JSON.stringify(c.VIDEO_IN)} is not a file (the ${entryPoint} entry point reads a video or image file)`);
    if (source === "folder" && !(fs.existsSync(c.VIDEO_IN) && fs.statSync(c.VIDEO_IN).isDirectory())) fail("VIDEO_IN", `${JSON.stringify(c.VIDEO_IN)} is not a folder (the FolderWatch entry point watches a folder)`);
  }
  if (c.startTime !== undefined && Number.isNaN(new Date(c.startTime).getTime())) fail("startTime", `${JSON.stringify(c.startTime)} is not an ISO 8601 timestamp`);
  if (c.amqpHost && /[/:@]/.test(c.amqpHost)) fail("amqpHost", `${JSON.stringify(c.amqpHost)} must be a host name or address only (port, user and password have their own parameters)`);
  if (c.hardwareDecoderType && !/^(none|[a-z0-9_]+)$/i.test(c.hardwareDecoderType)) fail("hardwareDecoderType", `${JSON.stringify(c.hardwareDecoderType)} must be None or an ffmpeg -hwaccel name such as cuda or vaapi`);
  if (c.sensorsConfigFile && typeof c.sensorsConfigFile === "string" && !fs.existsSync(c.sensorsConfigFile)) fail("sensorsConfigFile", `${JSON.stringify(c.sensorsConfigFile)} is not a file`);
  if (typeof c.boxFilterConfig === "string" && c.boxFilterConfig && !fs.existsSync(c.boxFilterConfig)) fail("boxFilterConfig", `${JSON.stringify(c.boxFilterConfig)} is not a file`);
  for (const [i, m] of c.extensionModules.entries()) if (!fs.existsSync(resolveFrom(configPath, m))) fail(`extensionModules[${i}]`, `${JSON.stringify(m)} is not a file`);
  const updateOnlyOnChange = c.updateOnlyOnChange ?? source !== "folder";
  return {
    ...c,
    entryPoint,
    source,
    updateOnlyOnChange,
    fpsLimit: c.fpsLimit ?? (source === "rtsp" ? 20 : 0),
    lptStabilizationStrategy: c.lptStabilizationStrategy || (updateOnlyOnChange ? "remove" : "update"),
    extensionModules: c.extensionModules.map((m) => resolveFrom(configPath, m)),
    configPath,
  };
}

/** Paths in a configuration file are relative to the file (absolute ones as they are). */
export function resolveFrom(configPath: string, p: string): string {
  return path.isAbsolute(p) || !configPath ? path.resolve(p) : path.resolve(path.dirname(configPath), p);
}

/** The configuration without secrets, for status pages and logs. */
export function redactedConfig(c: Record<string, unknown>): Record<string, unknown> {
  const out = { ...c };
  if (out.amqpPassword) out.amqpPassword = "***";
  if (typeof out.VIDEO_IN === "string") out.VIDEO_IN = out.VIDEO_IN.replace(/\/\/([^/@]*)@/, "//***@");
  // any other URL (eventImageUri with a SAS signature, say): passwords and secret query values out
  for (const [k, v] of Object.entries(out)) if (typeof v === "string") out[k] = redactUri(v);
  return out;
}
