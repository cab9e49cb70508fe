/**
 * The analytics pipeline parameters that apply to image annotation (spec: "Pipeline parameters"),
 * read from a JSON file named by OBSCURA_VEHICLE_CONFIG (docs/vehicle-api.md#parameters). Names,
 * defaults and meanings are the spec's; parameters of the video, RTSP, AMQP and debug parts of the
 * pipeline are accepted (a configuration written for the commercial pipeline loads unchanged) and
 * listed as not used by the image API.
 */
import fs from "node:fs";
import { z } from "zod";
import { ObscuraError } from "@/lib/errors";
import { redactUri } from "@/lib/storage-uri";

export const VEHICLE_CLASSES = ["car", "bus", "truck", "motorbike"] as const;
export type VehicleClass = (typeof VEHICLE_CLASSES)[number];
const ENABLED_CLASSES = [...VEHICLE_CLASSES, "licenseplate"] as const;

const unit = (what: string) => z.number({ error: `${what} must be a number from 0 to 1` }).min(0, { error: `${what} must be from 0 to 1` }).max(1, { error: `${what} must be from 0 to 1` });
const chars = (what: string) =>
  z.number({ error: `${what} must be an integer from 1 to 16` }).int({ error: `${what} must be an integer from 1 to 16` }).min(1, { error: `${what} must be at least 1` }).max(16, { error: `${what} must be at most 16` });
const dummy = z.string({ error: "must be a string (empty: analysis on)" }).max(128, { error: "must be at most 128 characters" }).default("");
const groupName = z.string({ error: "must be a region group name" }).regex(/^[a-z0-9_-]{1,32}$/, { error: "must be a group name such as us or eu" });

/** The shape of the image-annotation parameters (the analytics pipeline extends it). */
export const vehicleParamsShape = {
    detectionMinConfidence: unit("detectionMinConfidence").default(0.3),
    detectionOverlapThreshold: unit("detectionOverlapThreshold").default(0.3),
    enabledClasses: z
      .preprocess(
        (v) => (typeof v === "string" ? v.split(",").map((s) => s.trim()).filter(Boolean) : v),
        z.array(z.enum(ENABLED_CLASSES, { error: `must be one of ${ENABLED_CLASSES.join(", ")}` }), { error: "must be a list of classes" }),
      )
      .default([...ENABLED_CLASSES]),
    sourceId: z.string({ error: "must be a string" }).max(128).default("lpr-1"),
    splitMakeModel: z.boolean({ error: "must be true or false" }).default(false),
    lptPreferAccuracyToSpeed: z.boolean({ error: "must be true or false" }).default(false),
    lptFilter: groupName.default("us"),
    lptFilterDefinitions: z.string({ error: "must be a file path" }).default(""),
    lptMaxCharacters: chars("lptMaxCharacters").default(8),
    lptMinCharacters: chars("lptMinCharacters").default(3),
    lptMinConfidence: unit("lptMinConfidence").default(0.5),
    lptSingleCharThreshold: unit("lptSingleCharThreshold").default(0.18),
    lptSkipCarsWithoutLPs: z.boolean({ error: "must be true or false" }).default(false),
    lptStringScoring: z.enum(["min", "max", "average"], { error: "must be min, max or average" }).default("min"),
    lptWeightDetScore: unit("lptWeightDetScore").default(0),
    rectifyLicensePlates: z.boolean({ error: "must be true or false" }).default(true),
    mmcFilter: groupName.default("us"),
    makeModelDummyValue: dummy,
    colorDummyValue: dummy,
    lpStringDummyValue: dummy,
    lpRegionDummyValue: dummy,
};
const base = z.object(vehicleParamsShape).catchall(z.unknown());

export const vehicleParamsSchema = base.superRefine((p, ctx) => {
    if (p.lptMinCharacters > p.lptMaxCharacters) {
      ctx.addIssue({ code: "custom", path: ["lptMinCharacters"], message: `lptMinCharacters (${p.lptMinCharacters}) must not exceed lptMaxCharacters (${p.lptMaxCharacters})` });
    }
  });

export type VehicleParams = z.output<typeof vehicleParamsSchema>;

/** Spec parameters of the pipeline's other parts: accepted in the file, not used by image annotation. */
export const NOT_USED = new Set([
  "detectionModel", "imageSaveDir", "imageWriterFormat", "useTracker", "trackerType", "useComboVehicleModel", "comboVehicleModelMode",
  "debugSettings", "updateAllowEmptyJSON", "updateMinFrequencyMs", "updateOnlyOnChange", "updateOnlyOnEvents", "updateOnMetaclassCountChange",
  "updateOnStart", "updateResetStateOnNewInput", "lptModel", "lptStabilizationDelay", "lptStabilizationStrategy", "lptStringMergeWindow",
  "mmcFilterDefinitions", "boxFilterConfig", "extensionModules", "debugRawResultsPrefix", "performanceInfo", "includeAverageHardware",
  "performanceCSVFile", "debugOutputPath", "debugSaveFormat", "sensorsConfigFile", "amqpUseSsl", "amqpHost", "amqpPort", "amqpMaxRetries",
  "amqpUser", "amqpPassword", "amqpExchange", "amqpRoutingKey", "amqpErrorOnFailure", "outputPrefix", "VIDEO_IN", "hardwareDecoderType",
  "resizeToSize", "maxQueueSize", "fpsLimit", "recordTo", "recordInterval", "rtspTimeoutMs", "rtspRetryCount", "rtspUseTCP",
]);

/** A refused value as the error shows it: secrets never (passwords, keys, tokens; URL passwords and SAS signatures redacted). */
function shown(field: string, value: unknown): string {
  if (/password|secret|token|api_?key/i.test(field)) return '"***"';
  return typeof value === "string" ? JSON.stringify(redactUri(value)) : JSON.stringify(value);
}

/** Each problem as {field, problem}, the problem naming the value given. */
export function zodDetails(error: z.ZodError, input: unknown): Array<{ field: string; problem: string }> {
  return error.issues.map((i) => {
    const field = i.path.join(".");
    const value = i.path.reduce<unknown>((o, k) => (o && typeof o === "object" ? (o as Record<PropertyKey, unknown>)[k as PropertyKey] : undefined), input);
    return { field, problem: `${i.message}${value === undefined ? "" : ` (got ${shown(field, value)})`}` };
  });
}

/** Checks parameters given as an object; throws INVALID_ARGUMENT naming the parameter, the value and what is allowed. */
export function parseVehicleParams(input: unknown, where = "vehicle parameters"): { params: VehicleParams; ignored: string[] } {
  if (input === null || typeof input !== "object" || Array.isArray(input)) throw new ObscuraError("INVALID_ARGUMENT", `${where} must be a JSON object of pipeline parameters`);
  const r = vehicleParamsSchema.safeParse(input);
  if (!r.success) {
    const details = zodDetails(r.error, input);
    throw new ObscuraError("INVALID_ARGUMENT", `${where}: ${details.map((d) => `${d.field}: ${d.problem}`).join("; ")}`, { details });
  }
  const known = new Set(Object.keys(base.shape));
  const ignored: string[] = [];
  for (const k of Object.keys(input)) {
    if (known.has(k)) continue;
    if (NOT_USED.has(k)) ignored.push(k);
    else {
      throw new ObscuraError("INVALID_ARGUMENT", `${where}: ${k} is not a pipeline parameter; known: ${[...known].join(", ")} (and, not used by image annotation: ${[...NOT_USED].join(", ")})`, {
        details: [{ field: k, problem: "is not a pipeline parameter" }],
      });
    }
  }
  return { params: r.data, ignored };
}

/** The parameters of OBSCURA_VEHICLE_CONFIG (defaults when unset). */
export function loadVehicleParams(file = process.env.OBSCURA_VEHICLE_CONFIG ?? ""): { params: VehicleParams; ignored: string[]; file: string | null } {
  if (!file) return { ...parseVehicleParams({}), file: null };
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(/*turbopackIgnore: true*/ file, "utf8"));
  } catch (e) {
    throw new ObscuraError("INVALID_ARGUMENT", `OBSCURA_VEHICLE_CONFIG ${file} cannot be read as JSON: ${(e as Error).message}`);
  }
  return { ...parseVehicleParams(json, `OBSCURA_VEHICLE_CONFIG ${file}`), file };
}
