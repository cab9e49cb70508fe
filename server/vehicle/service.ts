/**
 * The vehicle annotation service of one process: its parameters (OBSCURA_VEHICLE_CONFIG), region
 * groups, readiness and the queue in front of the models.
 *
 * Readiness (spec "Service readiness"): `starting` while the models load and the initial health
 * test runs (real inference on a built-in picture of a car with a plate, assets/vehicle-health.png,
 * which must find a vehicle and read the plate 7XYZ482); `ready` once it passed, logging
 * `initial health test passed, server ready`; `failed` when the configuration or the test failed
 * (retried on a request after a minute). Requests are refused with 503 (Retry-After) until ready.
 * Analyses run one at a time per process (OBSCURA_ANNOTATE_CONCURRENCY) so that the models have
 * the cores; requests queue for their turn.
 */
import fs from "node:fs";
import path from "node:path";
import { ObscuraError } from "@/lib/errors";
import { config } from "../config";
import { log } from "../log";
import type { RgbImage } from "../vision/types";
import { type Analysis, analyzeImage } from "./analyze";
import { decodeAnnotateImage } from "./images";
import { type VehicleParams, loadVehicleParams } from "./params";
import { type CompiledGroup, type RegionGroup, compileGroup, loadGroups, unionGroups } from "./regions";

export const HEALTH_IMAGE = "assets/vehicle-health.png";
export const HEALTH_PLATE = "7XYZ482";
const RETRY_FAILED_MS = 60_000;
/**
 * The health test checks the models, not the operator's thresholds: analysis switched on and a
 * lenient vehicle threshold (the drawn car scores ~0.5), whatever the configuration says.
 */
const HEALTH_TEST_PARAMS = {
  lpStringDummyValue: "",
  lpRegionDummyValue: "",
  makeModelDummyValue: "",
  colorDummyValue: "",
  detectionMinConfidence: 0.2,
  lptMinConfidence: 0.5,
  lptMinCharacters: 3,
  lptMaxCharacters: 8,
  enabledClasses: ["car", "bus", "truck", "motorbike", "licenseplate"],
} satisfies Partial<VehicleParams>;

export type Phase = "starting" | "ready" | "failed";

export interface ServiceState {
  phase: Phase;
  startedAt: string | null;
  readyAt: string | null;
  error: string | null;
  /** What the health test found (vehicles, plate strings), for the health endpoint. */
  healthTest: { vehicles: number; plates: string[]; ms: number } | null;
}

interface Service {
  state: ServiceState;
  params: VehicleParams | null;
  groups: Record<string, CompiledGroup>;
  warmup: Promise<void> | null;
  failedAt: number;
  running: number;
  waiting: Array<() => void>;
}

const KEY = Symbol.for("obscura.vehicle.service");
function service(): Service {
  const g = globalThis as { [KEY]?: Service };
  return (g[KEY] ??= {
    state: { phase: "starting", startedAt: null, readyAt: null, error: null, healthTest: null },
    params: null,
    groups: {},
    warmup: null,
    failedAt: 0,
    running: 0,
    waiting: [],
  });
}

/** Loads and checks the configuration (also called by `npm start` to refuse a bad one at once). */
export function loadConfiguration(): { params: VehicleParams; groups: Record<string, RegionGroup>; ignored: string[] } {
  const { params, ignored } = loadVehicleParams();
  const groups = loadGroups(params.lptFilterDefinitions || null);
  for (const [field, name] of [["lptFilter", params.lptFilter]] as const) {
    if (!groups[name]) throw new ObscuraError("INVALID_ARGUMENT", `${field} ${JSON.stringify(name)} is not a region group; known: ${Object.keys(groups).join(", ")}`);
  }
  return { params, groups, ignored };
}

/** Starts the warm-up when it has not run (or failed over a minute ago); returns the state. */
export function ensureStarted(): ServiceState {
  const s = service();
  const retry = s.state.phase === "failed" && Date.now() - s.failedAt > RETRY_FAILED_MS;
  if (!s.warmup || retry) {
    s.state = { ...s.state, phase: "starting", startedAt: new Date().toISOString(), error: null };
    s.warmup = warmUp(s);
  }
  return s.state;
}

async function warmUp(s: Service): Promise<void> {
  const t0 = Date.now();
  try {
    const { params, groups, ignored } = loadConfiguration();
    if (ignored.length) log.info("vehicle parameters not used by image annotation", { parameters: ignored });
    s.params = params;
    s.groups = Object.fromEntries(Object.entries(groups).map(([k, g]) => [k, compileGroup(g)]));
    const file = path.join(/*turbopackIgnore: true*/ config().appDir, HEALTH_IMAGE);
    const image = await decodeAnnotateImage("health image", fs.readFileSync(/*turbopackIgnore: true*/ file), { pixels: 1e8, imageBytes: 1e8 });
    const result = await analyzeImage(image, { vehicles: true, plates: true, params: { ...params, ...HEALTH_TEST_PARAMS }, group: s.groups.us!, groupName: "us" });
    const plates = result.plates.map((p) => p.text);
    s.state.healthTest = { vehicles: result.vehicles.length, plates, ms: Date.now() - t0 };
    if (!result.vehicles.length) throw new Error(`no vehicle found in ${HEALTH_IMAGE}`);
    if (!plates.includes(HEALTH_PLATE)) throw new Error(`plate ${HEALTH_PLATE} not read in ${HEALTH_IMAGE} (read: ${plates.join(", ") || "nothing"})`);
    s.state = { ...s.state, phase: "ready", readyAt: new Date().toISOString(), error: null };
    log.info("initial health test passed, server ready", { service: "vehicle annotation", ms: Date.now() - t0 });
  } catch (e) {
    s.failedAt = Date.now();
    s.state = { ...s.state, phase: "failed", error: (e as Error).message };
    log.error("initial health test failed; vehicle annotation unavailable", { error: (e as Error).message });
  }
}

/** Throws UNAVAILABLE (503, with a retry hint) unless the service is ready. */
export function requireReady(): void {
  const st = ensureStarted();
  if (st.phase === "ready") return;
  if (st.phase === "starting") throw new ObscuraError("UNAVAILABLE", "the vehicle annotation service is starting: models are loading and the initial health test is running; retry shortly");
  throw new ObscuraError("UNAVAILABLE", `the vehicle annotation service is not available: ${st.error}`);
}

export function serviceState(): ServiceState {
  return ensureStarted();
}

/** Waits for the warm-up (tests, the start script). */
export async function whenStarted(): Promise<ServiceState> {
  ensureStarted();
  await service().warmup;
  return service().state;
}

export function params(): VehicleParams {
  const p = service().params;
  if (!p) throw new ObscuraError("UNAVAILABLE", "the vehicle annotation service is starting; retry shortly");
  return p;
}

/** The region group plates are read against: a forced one (/v2/vehicle/us), both (/v2/vehicle), or lptFilter's. */
export function regionGroup(which: "configured" | "both" | string): { group: CompiledGroup; name: string } {
  const s = service();
  const p = params();
  if (which === "both") return { group: unionGroups("", s.groups.us!, s.groups.eu!), name: "us,eu" };
  const name = which === "configured" ? p.lptFilter : which;
  const g = s.groups[name];
  if (!g) throw new ObscuraError("INVALID_ARGUMENT", `region group ${JSON.stringify(name)} is not defined; known: ${Object.keys(s.groups).join(", ")}`);
  return { group: g, name };
}

function concurrency(): number {
  const n = Number(process.env.OBSCURA_ANNOTATE_CONCURRENCY ?? 1);
  return Number.isInteger(n) && n > 0 ? n : 1;
}

/** Runs one analysis when its turn comes (one at a time by default). */
export async function analyze(image: RgbImage, want: { vehicles: boolean; plates: boolean }, which: "configured" | "both" | string, overrides: Partial<VehicleParams> = {}): Promise<Analysis & { locale: string }> {
  const s = service();
  const { group, name } = regionGroup(which);
  // A finishing analysis hands its slot straight to the next in line (no newcomer can slip in between).
  if (s.running >= concurrency()) await new Promise<void>((r) => s.waiting.push(r));
  else s.running++;
  try {
    return { ...(await analyzeImage(image, { ...want, params: { ...params(), ...overrides }, group, groupName: name })), locale: name };
  } finally {
    const next = s.waiting.shift();
    if (next) next();
    else s.running--;
  }
}
