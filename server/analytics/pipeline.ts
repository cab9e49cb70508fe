/**
 * The analytics pipeline (issue 10; docs/pipeline.md). A configuration (config.ts) and an entry
 * point's frames (sources.ts) go through, per analysed frame:
 *
 *   vehicle and plate analysis (the annotation API's: detectionModel, plate and make/model
 *   parameters, dummy values) -> box filters (boxFilterConfig) -> identities, plate strings over
 *   time (stream.ts) -> extension modules (process(tick, data, frame), in order) -> sensors
 *   (sensorsConfigFile) -> the update strategy -> outputs: sensor events in the database (with
 *   frame and box images when saveEventImages), AMQP, imageSaveDir, outputPrefix, debugSettings,
 *   performanceInfo / performanceCSVFile, and the caller's onOutput.
 *
 * `Pipeline` is the Direct entry point (`await Pipeline.create(config)`, then `process(frame)` per
 * frame, or `run()` to read the configured source); `npm run pipeline` and the REST resource
 * (runs.ts) use the same class.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import sharp from "sharp";
import YAML from "yaml";
import { ObscuraError } from "@/lib/errors";
import type { Box } from "@/lib/geometry";
import { config as serverConfig } from "../config";
import { log } from "../log";
import { joinUri, writeBytes } from "../storage";
import { analyzeImage } from "../vehicle/analyze";
import type { VehicleParams } from "../vehicle/params";
import { compileGroup, loadGroups } from "../vehicle/regions";
import { customVehicleModels } from "../vision/engine";
import type { Detector, RgbImage } from "../vision/types";
import { AmqpOutput } from "./amqp";
import { pipelineConfig, type PipelineConfig } from "./config";
import { insertEvents, insertMedia, type SensorEventInput } from "./events";
import { applyBoxFilters, parseBoxFilters, type BoxFilter } from "./filters";
import { parseSensors, SensorEngine, type SensorsFile } from "./sensors";
import { frameSource, type RecordedSegment, type SourceStats } from "./sources";
import { type FrameOutput, StreamState } from "./stream";

/** Built-in model names: the spec's generation + server/embedded + standard/fast/best form (gen5..gen7). */
const BUILT_IN_MODEL = /^gen[5-7][es][sfb]$/;
export const BUILT_IN_DETECTOR = "coco-centernet";

export interface ExtensionModule {
  configure?(configPath: string): unknown;
  process(tick: number, data: FrameOutput, frame: RgbImage): unknown;
}

export interface PipelineStats extends SourceStats {
  framesAnalysed: number;
  outputs: number;
  events: number;
  startedAt: string;
  lastFrameAt: string | null;
  /** Analysed frames per second since the start. */
  fps: number;
  /** Median analysis time per frame of the last 100 frames (ms). */
  frameMs: number;
  amqpPublished: number;
  amqpFailed: number;
  segments: number;
}

export interface PipelineOptions {
  /** Each emitted output (after the update strategy). */
  onOutput?: (o: FrameOutput) => void | Promise<void>;
  /** Progress of a File source (frames done of total, when known). */
  onProgress?: (s: PipelineStats) => void;
  /** Where configuration problems are reported from (a file name, "POST /api/v1/pipelines"). */
  where?: string;
  /** The configuration file (extension modules' configure(configPath); relative paths in it). */
  configPath?: string;
}

function vehicleDetector(name: string): Detector | undefined {
  if (BUILT_IN_MODEL.test(name) || name === BUILT_IN_DETECTOR) return undefined;
  const custom = customVehicleModels();
  const d = custom.get(name);
  if (!d) {
    throw new ObscuraError("INVALID_ARGUMENT", `detectionModel: ${JSON.stringify(name)} is not a model here; allowed: gen5..gen7 names such as gen7es (the built-in ${BUILT_IN_DETECTOR})${custom.size ? `, or a custom model: ${[...custom.keys()].join(", ")}` : ", or a custom vehicle model installed in OBSCURA_MODELS_DIR (docs/models.md)"}`, {
      details: [{ field: "detectionModel", problem: `${JSON.stringify(name)} is not installed` }],
    });
  }
  return d;
}

function readSensors(c: PipelineConfig): SensorsFile | null {
  if (!c.sensorsConfigFile) return null;
  if (typeof c.sensorsConfigFile !== "string") return parseSensors(c.sensorsConfigFile);
  let raw: unknown;
  try {
    raw = YAML.parse(fs.readFileSync(/*turbopackIgnore: true*/ c.sensorsConfigFile, "utf8"));
  } catch (e) {
    throw new ObscuraError("INVALID_ARGUMENT", `sensorsConfigFile ${JSON.stringify(c.sensorsConfigFile)} cannot be read as JSON or YAML: ${(e as Error).message}`);
  }
  return parseSensors(raw, `sensorsConfigFile ${c.sensorsConfigFile}`);
}

async function loadExtensions(c: PipelineConfig): Promise<Array<{ file: string; mod: ExtensionModule }>> {
  const out: Array<{ file: string; mod: ExtensionModule }> = [];
  for (const [i, file] of c.extensionModules.entries()) {
    let mod: ExtensionModule;
    try {
      const m = (await import(/*turbopackIgnore: true*/ /* @vite-ignore */ pathToFileURL(file).href)) as ExtensionModule & { default?: ExtensionModule };
      mod = typeof m.process === "function" ? m : (m.default ?? m);
    } catch (e) {
      throw new ObscuraError("INVALID_ARGUMENT", `extensionModules[${i}]: ${file} cannot be loaded: ${(e as Error).message}`);
    }
    if (typeof mod.process !== "function") throw new ObscuraError("INVALID_ARGUMENT", `extensionModules[${i}]: ${file} exports no process(tick, data, frame) function`);
    if (mod.configure !== undefined && typeof mod.configure !== "function") throw new ObscuraError("INVALID_ARGUMENT", `extensionModules[${i}]: ${file}: configure must be a function`);
    try {
      await mod.configure?.(c.configPath);
    } catch (e) {
      throw new ObscuraError("INVALID_ARGUMENT", `extensionModules[${i}]: ${file}: configure(${JSON.stringify(c.configPath)}) failed: ${(e as Error).message}`);
    }
    out.push({ file, mod });
  }
  return out;
}

const median = (xs: number[]) => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

type SensorShapes = ReturnType<SensorEngine["geometry"]>;

function encodeImage(image: RgbImage, format: "jpg" | "png", boxes: Array<{ box: Box; label: string; color: string }> = [], sensors: SensorShapes = []): Promise<Buffer> {
  let img = sharp(Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength), { raw: { width: image.width, height: image.height, channels: 3 } });
  if (boxes.length || sensors.length) {
    const esc = (s: string) => s.replace(/[<>&"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
    const label = (x: number, y: number, text: string, color: string) =>
      `<text x="${x}" y="${y}" font-family="DejaVu Sans, sans-serif" font-size="15" font-weight="bold" fill="${color}" stroke="#000" stroke-width="3" paint-order="stroke">${esc(text)}</text>`;
    const shapes = sensors.map((s) => {
      const lines = s.lines.map((l) => `<line x1="${l[0]![0]}" y1="${l[0]![1]}" x2="${l[1]![0]}" y2="${l[1]![1]}" stroke="#ff4081" stroke-width="3" stroke-dasharray="10 6"/>`).join("");
      const region = s.region ? `<polygon points="${s.region.map((p) => p.join(",")).join(" ")}" fill="#ffab40" fill-opacity="0.18" stroke="#ffab40" stroke-width="2"/>` : "";
      const at = s.region?.[0] ?? s.lines[0]?.[0] ?? [0, 0];
      return `${region}${lines}${label(at[0] + 4, at[1] + 18, `${s.name} (${s.type})`, s.region ? "#ffab40" : "#ff4081")}`;
    });
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${image.width}" height="${image.height}">${shapes.join("")}${boxes
      .map((b) => `<rect x="${b.box.x}" y="${b.box.y}" width="${b.box.width}" height="${b.box.height}" fill="none" stroke="${b.color}" stroke-width="3"/>${label(b.box.x + 2, Math.max(16, b.box.y - 5), b.label, b.color)}`)
      .join("")}</svg>`;
    img = img.composite([{ input: Buffer.from(svg), top: 0, left: 0 }]);
  }
  return format === "png" ? img.png().toBuffer() : img.jpeg({ quality: 85 }).toBuffer();
}

function crop(image: RgbImage, b: Box): RgbImage {
  const x0 = Math.max(0, Math.floor(b.x));
  const y0 = Math.max(0, Math.floor(b.y));
  const x1 = Math.min(image.width, Math.ceil(b.x + b.width));
  const y1 = Math.min(image.height, Math.ceil(b.y + b.height));
  const w = Math.max(1, x1 - x0);
  const h = Math.max(1, y1 - y0);
  const data = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) data.set(image.data.subarray(((y0 + y) * image.width + x0) * 3, ((y0 + y) * image.width + x0 + w) * 3), y * w * 3);
  return { data, width: w, height: h };
}

export class Pipeline {
  readonly config: PipelineConfig;
  private readonly state: StreamState;
  private sensors: SensorEngine | null = null;
  private readonly stats: PipelineStats;
  private readonly times: number[] = [];
  private readonly startMs = Date.now();
  private tick = 0;
  private readonly tracks = new Map<number, Array<{ x: number; y: number; t: number }>>();
  /** debugSettings history: the last outputs. */
  readonly history: FrameOutput[] = [];
  private closed = false;

  private constructor(
    c: PipelineConfig,
    private readonly sensorsFile: SensorsFile | null,
    private readonly filters: BoxFilter[],
    private readonly extensions: Array<{ file: string; mod: ExtensionModule }>,
    private readonly detector: Detector | undefined,
    private readonly group: ReturnType<typeof compileGroup>,
    private readonly amqp: AmqpOutput | null,
    private readonly opts: PipelineOptions,
  ) {
    this.config = c;
    this.state = new StreamState(c, c.fpsLimit || 25);
    this.stats = {
      framesRead: 0, framesDropped: 0, reconnects: 0, inputs: 0, queueLength: 0, framesAnalysed: 0, outputs: 0, events: 0,
      startedAt: new Date().toISOString(), lastFrameAt: null, fps: 0, frameMs: 0, amqpPublished: 0, amqpFailed: 0, segments: 0,
    };
  }

  /** Checks the configuration and prepares every part; nothing runs before all of it is valid. */
  static async create(input: unknown, opts: PipelineOptions = {}): Promise<Pipeline> {
    const c = pipelineConfig(input, { where: opts.where, configPath: opts.configPath });
    const detector = vehicleDetector(c.detectionModel);
    const groups = loadGroups(c.lptFilterDefinitions || null);
    const g = groups[c.lptFilter];
    if (!g) throw new ObscuraError("INVALID_ARGUMENT", `lptFilter: ${JSON.stringify(c.lptFilter)} is not a region group; known: ${Object.keys(groups).join(", ")}`, { details: [{ field: "lptFilter", problem: "unknown region group" }] });
    const sensors = readSensors(c);
    const filters = parseBoxFilters(c.boxFilterConfig);
    const extensions = await loadExtensions(c);
    const amqp = c.amqpHost ? new AmqpOutput(c) : null;
    if (amqp) await amqp.connect();
    return new Pipeline(c, sensors, filters, extensions, detector, compileGroup(g), amqp, opts);
  }

  status(): PipelineStats {
    const elapsed = (Date.now() - this.startMs) / 1000;
    return { ...this.stats, fps: elapsed > 0 ? Math.round((this.stats.framesAnalysed / elapsed) * 100) / 100 : 0, frameMs: Math.round(median(this.times)), amqpPublished: this.amqp?.published ?? 0, amqpFailed: this.amqp?.failed ?? 0 };
  }

  private debug(what: (typeof this.config.debugSettings)[number]): boolean {
    return this.config.debugSettings.includes(what);
  }

  private outDir(): string {
    return this.config.debugOutputPath || path.join(serverConfig().dataDir, "tmp");
  }

  /**
   * Analyses one frame (Direct entry point); returns its output when the update strategy emits it.
   * `timeMs` is the frame's time (default now); `newInput` starts a new stream when
   * updateResetStateOnNewInput (FolderWatch).
   */
  async process(image: RgbImage, f: { timeMs?: number; input?: string; newInput?: boolean; fps?: number } = {}): Promise<FrameOutput | null> {
    if (this.closed) throw new ObscuraError("FAILED_PRECONDITION", "the pipeline is closed");
    const c = this.config;
    const t0 = performance.now();
    const timeMs = f.timeMs ?? Date.now();
    if (f.newInput && c.updateResetStateOnNewInput && this.tick > 0) {
      this.state.reset();
      this.sensors = null;
      this.tracks.clear();
    }
    const tick = this.tick++;
    const started = Date.now();
    if (f.fps) this.state.fps = f.fps;
    // 1. analysis
    const classes = c.enabledClasses as readonly string[];
    const wantVehicles = classes.some((k) => k !== "licenseplate" && k !== "person");
    const a = await analyzeImage(image, {
      vehicles: wantVehicles,
      plates: classes.includes("licenseplate"),
      people: classes.includes("person"),
      params: c as unknown as VehicleParams,
      group: this.group,
      groupName: c.lptFilter,
      vehicleDetector: this.detector,
    });
    const analysisMs = performance.now() - t0;
    if (c.debugRawResultsPrefix) this.writeRaw(tick, a);
    // 2. box filters
    if (this.filters.length) {
      const frame = { width: image.width, height: image.height };
      const logFn = (msg: string, fields: Record<string, unknown>) => log.info(msg, { sourceId: c.sourceId, frame: tick, ...fields });
      const keptV = new Set(applyBoxFilters(this.filters, a.vehicles.map((v) => ({ cls: v.vehicleClass as string, box: v.box, v })), frame, logFn, this.debug("filteringDebug")).map((x) => x.v));
      const keptP = new Set(applyBoxFilters(this.filters, a.plates.map((p) => ({ cls: "licenseplate", box: p.box, p })), frame, logFn, this.debug("filteringDebug")).map((x) => x.p));
      const vehicles = a.vehicles.filter((v) => keptV.has(v));
      const plates = a.plates.filter((p) => keptP.has(p));
      for (const p of plates) p.vehicle = p.vehicle !== null && keptV.has(a.vehicles[p.vehicle]!) ? vehicles.indexOf(a.vehicles[p.vehicle]!) : null;
      for (const v of vehicles) v.plate = v.plate !== null && keptP.has(a.plates[v.plate]!) ? plates.indexOf(a.plates[v.plate]!) : null;
      a.vehicles = vehicles;
      a.plates = plates;
      if (a.people) a.people = applyBoxFilters(this.filters, a.people.map((p) => ({ cls: "person", box: p.box, p })), frame, logFn, this.debug("filteringDebug")).map((x) => x.p);
    }
    // 3. identities over time
    const tracked = this.state.update(a, timeMs);
    // 4. sensors
    let events: SensorEventInput[] = [];
    let sensorJson: unknown[] | null = null;
    if (this.sensorsFile) {
      this.sensors ??= new SensorEngine(this.sensorsFile, { width: image.width, height: image.height });
      for (const o of tracked.objects) {
        const pts = this.tracks.get(o.num) ?? [];
        pts.push({ x: Math.round(o.box.x + o.box.width / 2), y: Math.round(o.box.y + o.box.height / 2), t: timeMs });
        if (pts.length > 100) pts.shift();
        this.tracks.set(o.num, pts);
      }
      const found = this.sensors.update(timeMs, tracked.objects.map((o) => ({ id: o.num, type: o.type, box: o.box, score: o.score })), tracked.ended);
      const sf = this.sensorsFile;
      events = found.map((e) => ({
        id: crypto.randomUUID(),
        workspaceId: sf.workspaceId,
        deviceId: sf.deviceId,
        streamId: sf.streamId,
        sensorId: e.sensorId,
        sensorName: e.sensorName,
        sensorType: e.sensorType,
        direction: e.direction,
        objectType: e.objectType,
        uniqueId: e.uniqueId,
        confidence: tracked.objects.find((o) => o.num === e.uniqueId)?.score ?? null,
        model: this.detector && e.objectType !== "person" ? c.detectionModel : BUILT_IN_DETECTOR,
        value: e.value,
        timeCollected: new Date(timeMs),
        data: e.data,
        track: e.uniqueId !== null ? (this.tracks.get(e.uniqueId) ?? []).slice(-50) : null,
      }));
      for (const id of tracked.ended) this.tracks.delete(id);
      sensorJson = events.map((e) => ({ id: e.id, sensorId: e.sensorId, sensorName: e.sensorName, sensorType: e.sensorType, direction: e.direction, objectType: e.objectType, uniqueId: e.uniqueId, value: e.value, timeCollected: e.timeCollected.toISOString(), ...e.data }));
    }
    // 5. the output, extension modules, the update strategy
    const { output, emit } = this.state.output(
      {
        frameDimensions: { w: image.width, h: image.height },
        frameSource: f.input ?? c.VIDEO_IN,
        sourceId: c.sourceId,
        frameId: String(tick),
        frameTimestamp: timeMs,
        analyticsTimestamp: Date.now(),
        time_analytics_start: started / 1000,
        time_analytics_complete: Date.now() / 1000,
      },
      sensorJson,
      timeMs,
    );
    let data = output;
    for (const x of this.extensions) {
      const next = await x.mod.process(tick, data, image);
      if (next === null || next === undefined || typeof next !== "object") throw new ObscuraError("INTERNAL", `extension module ${x.file}: process() must return the frame's data object, got ${next === null ? "null" : typeof next}`);
      data = next as FrameOutput;
    }
    this.stats.framesAnalysed++;
    this.stats.lastFrameAt = new Date(timeMs).toISOString();
    const totalMs = performance.now() - t0;
    this.times.push(totalMs);
    if (this.times.length > 100) this.times.shift();
    if (c.performanceInfo) {
      data.performance = { frameMs: Math.round(totalMs), analysisMs: Math.round(analysisMs), fps: this.status().fps, queueLength: this.stats.queueLength, framesDropped: this.stats.framesDropped, ...(c.includeAverageHardware ? { loadAverage: os.loadavg()[0], cpus: os.cpus().length, rssMB: Math.round(process.memoryUsage().rss / 2 ** 20) } : {}) };
    }
    if (c.performanceCSVFile) {
      const head = fs.existsSync(c.performanceCSVFile) ? "" : "frameId,timestamp,analysisMs,frameMs,fps,vehicles,plates,queueLength,framesDropped\n";
      fs.mkdirSync(path.dirname(path.resolve(c.performanceCSVFile)), { recursive: true });
      fs.appendFileSync(c.performanceCSVFile, `${head}${tick},${new Date(timeMs).toISOString()},${analysisMs.toFixed(1)},${totalMs.toFixed(1)},${this.status().fps},${a.vehicles.length},${a.plates.length},${this.stats.queueLength},${this.stats.framesDropped}\n`);
    }
    // 6. events (stored whether or not the frame is emitted)
    if (events.length) await this.storeEvents(events, image, tracked.objects);
    if (this.debug("eventAnalytics")) for (const e of events) log.info("sensor event", { sourceId: c.sourceId, sensor: e.sensorName, type: e.sensorType, direction: e.direction, value: e.value, object: e.uniqueId });
    if (this.debug("log")) log.info("pipeline frame", { sourceId: c.sourceId, frame: tick, vehicles: a.vehicles.length, plates: a.plates.length, events: events.length, emitted: emit, ms: Math.round(totalMs) });
    this.opts.onProgress?.(this.status());
    if (!emit) return null;
    await this.emit(data, image);
    return data;
  }

  private writeRaw(tick: number, a: Awaited<ReturnType<typeof analyzeImage>>): void {
    const c = this.config;
    const file = `${c.debugRawResultsPrefix}${tick}.${c.debugSaveFormat}`;
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    if (c.debugSaveFormat === "json") fs.writeFileSync(file, JSON.stringify({ frame: tick, vehicles: a.vehicles, plates: a.plates }));
    else {
      const rows = [
        "metaClass,class,score,x,y,width,height,value",
        ...a.vehicles.map((v) => `vehicles,${v.vehicleClass},${v.score.toFixed(3)},${Math.round(v.box.x)},${Math.round(v.box.y)},${Math.round(v.box.width)},${Math.round(v.box.height)},${v.color.value}`),
        ...a.plates.map((p) => `licensePlates,licenseplate,${p.detectionScore.toFixed(3)},${Math.round(p.box.x)},${Math.round(p.box.y)},${Math.round(p.box.width)},${Math.round(p.box.height)},${p.text}`),
      ];
      fs.writeFileSync(file, `${rows.join("\n")}\n`);
    }
  }

  private async storeEvents(events: SensorEventInput[], image: RgbImage, objects: Array<{ num: number; box: Box }>): Promise<void> {
    const c = this.config;
    if (c.saveEventImages && this.sensorsFile) {
      const base = c.eventImageUri || `${pathToFileURL(path.join(serverConfig().dataDir, "analytics-media")).href}/`;
      const frame = await encodeImage(image, "jpg");
      const media: Parameters<typeof insertMedia>[0][number][] = [];
      for (const e of events) {
        const frameId = crypto.randomUUID();
        const frameUri = joinUri(base, `${folderName(e.streamId)}/${frameId}.jpg`);
        await writeBytes(frameUri, frame);
        media.push({ id: frameId, workspaceId: e.workspaceId, streamId: e.streamId, deviceId: e.deviceId, timeCollected: e.timeCollected, mediaType: "IMAGE", uri: frameUri, contentType: "image/jpeg", captureType: "RAW", startTime: e.timeCollected, events: [{ eventId: e.id! }] });
        e.frameImage = mediaPath(e.streamId, frameId);
        const o = objects.find((x) => x.num === e.uniqueId);
        if (o) {
          const boxId = crypto.randomUUID();
          const boxUri = joinUri(base, `${folderName(e.streamId)}/${boxId}.jpg`);
          await writeBytes(boxUri, await encodeImage(crop(image, o.box), "jpg"));
          media.push({ id: boxId, workspaceId: e.workspaceId, streamId: e.streamId, deviceId: e.deviceId, timeCollected: e.timeCollected, mediaType: "IMAGE", uri: boxUri, contentType: "image/jpeg", captureType: "BOUNDING_BOX", startTime: e.timeCollected, objects: [{ objectId: String(o.num) }], events: [{ eventId: e.id! }] });
          e.boundingBoxImage = mediaPath(e.streamId, boxId);
        }
      }
      if (c.storeEvents) await insertMedia(media);
    }
    if (c.storeEvents) await insertEvents(events);
    this.stats.events += events.length;
  }

  /** A recorded RTSP segment: a VIDEO media record of the stream (served by the Data API). */
  async segment(s: RecordedSegment): Promise<void> {
    this.stats.segments++;
    if (!this.sensorsFile || !this.config.storeEvents) return;
    const sf = this.sensorsFile;
    await insertMedia([{ workspaceId: sf.workspaceId, streamId: sf.streamId, deviceId: sf.deviceId, timeCollected: new Date(s.startMs + s.durationMs), mediaType: "VIDEO", uri: pathToFileURL(s.file).href, contentType: "video/mp4", startTime: new Date(s.startMs), durationMs: s.durationMs }]);
  }

  private async emit(data: FrameOutput, image: RgbImage): Promise<void> {
    const c = this.config;
    this.stats.outputs++;
    const boxes = () =>
      [
        ...Object.entries(data.metaClasses.vehicles).map(([id, v]) => ({ box: v.box, label: `${id} ${v.vehicleClass ?? ""}`, color: "#00e676" })),
        ...Object.entries(data.metaClasses.people ?? {}).map(([id, v]) => ({ box: v.box, label: id, color: "#40c4ff" })),
        ...Object.entries(data.metaClasses.licensePlates).map(([id, p]) => ({ box: p.box, label: `${id} ${String(p.attributes.lpString?.value ?? "")}`, color: "#ffd600" }))].map((b) => ({
        ...b,
        box: { x: b.box.x, y: b.box.y, width: b.box.width, height: b.box.height },
      }));
    if (c.imageSaveDir) {
      fs.mkdirSync(c.imageSaveDir, { recursive: true });
      const file = path.join(c.imageSaveDir, `${c.sourceId}-${data.frameId}.${c.imageWriterFormat}`);
      fs.writeFileSync(file, await encodeImage(image, c.imageWriterFormat, this.debug("OSD") ? boxes() : [], this.debug("OSD") ? (this.sensors?.geometry() ?? []) : []));
      data.links.push({ type: "frame", path: file, format: c.imageWriterFormat });
    }
    if (c.outputPrefix) {
      const file = `${c.outputPrefix}${data.frameId}.jpg`;
      fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
      fs.writeFileSync(file, await encodeImage(image, "jpg", boxes(), this.sensors?.geometry() ?? []));
      data.links.push({ type: "annotated", path: file, format: "jpg" });
    }
    if (this.debug("printJson")) process.stdout.write(`${JSON.stringify(data)}\n`);
    if (this.debug("dumpJson") || this.debug("json")) {
      const dir = this.outDir();
      fs.mkdirSync(dir, { recursive: true });
      if (this.debug("dumpJson")) fs.writeFileSync(path.join(dir, `${c.sourceId}-${data.frameId}.json`), JSON.stringify(data, null, 2));
      if (this.debug("json")) fs.appendFileSync(path.join(dir, `${c.sourceId}.jsonl`), `${JSON.stringify(data)}\n`);
    }
    if (this.debug("history")) {
      this.history.push(data);
      if (this.history.length > 100) this.history.shift();
    }
    if (this.amqp) await this.amqp.publish(data);
    await this.opts.onOutput?.(data);
  }

  /** Reads the configured source until it ends or `signal` aborts; returns the final status. */
  async run(signal: AbortSignal = new AbortController().signal): Promise<PipelineStats> {
    const src = frameSource(this.config, {
      signal,
      stats: this.stats,
      onSegment: (s) => void this.segment(s).catch((e) => log.warn("recorded segment not stored", { file: s.file, error: String(e) })),
      log: (msg, fields) => log.warn(msg, { sourceId: this.config.sourceId, ...fields }),
    });
    try {
      for await (const f of src) {
        if (signal.aborted) break;
        await this.process(f.image, { timeMs: f.timeMs, input: f.input, newInput: f.newInput, fps: f.fps });
      }
    } catch (e) {
      if (!signal.aborted) throw e;
    } finally {
      await this.close();
    }
    return this.status();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.amqp?.close();
  }
}

function mediaPath(streamId: string, id: string): string {
  return `${(process.env.OBSCURA_PUBLIC_URL ?? "").replace(/\/$/, "")}/media/${encodeURIComponent(streamId)}?mediaId=${encodeURIComponent(id)}`;
}

/** Runs a configuration to the end (File, a finite ImageLoop or FolderWatch with watchIdleStopMs). */
export async function runPipeline(input: unknown, opts: PipelineOptions & { signal?: AbortSignal } = {}): Promise<PipelineStats> {
  const p = await Pipeline.create(input, opts);
  return p.run(opts.signal);
}

/** A stream id as one safe folder name under eventImageUri (the image names are UUIDs, so a shared folder is harmless). */
function folderName(streamId: string): string {
  const name = streamId.replace(/[^A-Za-z0-9._-]/g, "_");
  return name === "" || name === "." || name === ".." ? "_" : name;
}
