/**
 * The analytics pipeline, File entry point (issue 10, first part; docs/sensors.md): a video file
 * (`VIDEO_IN`) through vehicle detection, the tracker and the sensors of `sensorsConfigFile`,
 * into events (`sensor_events`, read by the Data API). The Direct form is `runFilePipeline()`
 * itself; `npm run pipeline -- --config FILE` runs it from the command line.
 *
 * Configuration: a JSON object of the spec's pipeline parameters (docs/vehicle-api.md#parameters
 * for the shared ones). Used here: VIDEO_IN, sensorsConfigFile (a path, or the sensors object
 * itself), detectionMinConfidence, detectionOverlapThreshold, enabledClasses, sourceId, and
 * `analyzeFps` (ours: frames analysed per second, default 10). Events are timed from
 * `startTime` (ours: ISO 8601, default the run's start) plus the frame's time in the video.
 * Not yet: RTSP, FolderWatch, ImageLoop, the update strategy, AMQP, images of events, extension
 * modules, box filters (the next part of issue 10).
 */
import fs from "node:fs";
import { ObscuraError } from "@/lib/errors";
import { nms } from "@/lib/geometry";
import { decodeFrames, probe } from "../media";
import { Tracker, trackerParams, trackingProfile } from "../tracking";
import { CocoDetector } from "../vision/objects";
import { parseVehicleParams } from "../vehicle/params";
import { insertEvents, type SensorEventInput } from "./events";
import { parseSensors, SensorEngine, type SensorsFile } from "./sensors";

const COCO_CLASS: Record<string, string> = { car: "car", bus: "bus", truck: "truck", motorcycle: "motorbike" };

export interface PipelineResult {
  frames: number;
  analysedFrames: number;
  events: SensorEventInput[];
  seconds: number;
}

/** Reads and checks a pipeline configuration; errors name the parameter and the value. */
export function pipelineConfig(raw: unknown, where = "pipeline configuration"): { videoIn: string; sensors: SensorsFile; analyzeFps: number; startTime: Date; params: ReturnType<typeof parseVehicleParams>["params"] } {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new ObscuraError("INVALID_ARGUMENT", `${where} must be a JSON object of pipeline parameters`);
  const { VIDEO_IN, sensorsConfigFile, analyzeFps, startTime, ...rest } = raw as Record<string, unknown>;
  if (typeof VIDEO_IN !== "string" || !VIDEO_IN) throw new ObscuraError("INVALID_ARGUMENT", `${where}: VIDEO_IN is required: the video or image file to analyse`);
  if (!fs.existsSync(VIDEO_IN)) throw new ObscuraError("INVALID_ARGUMENT", `${where}: VIDEO_IN ${JSON.stringify(VIDEO_IN)} is not a file`);
  if (sensorsConfigFile === undefined || sensorsConfigFile === "") throw new ObscuraError("INVALID_ARGUMENT", `${where}: sensorsConfigFile is required: a sensors file (docs/sensors.md) or the sensors object`);
  let sensorsRaw: unknown = sensorsConfigFile;
  if (typeof sensorsConfigFile === "string") {
    try {
      sensorsRaw = JSON.parse(fs.readFileSync(/*turbopackIgnore: true*/ sensorsConfigFile, "utf8"));
    } catch (e) {
      throw new ObscuraError("INVALID_ARGUMENT", `${where}: sensorsConfigFile ${JSON.stringify(sensorsConfigFile)} cannot be read as JSON: ${(e as Error).message}`);
    }
  }
  const sensors = parseSensors(sensorsRaw, `${where}: sensorsConfigFile`);
  const fps = analyzeFps === undefined ? 10 : Number(analyzeFps);
  if (!(fps > 0 && fps <= 60)) throw new ObscuraError("INVALID_ARGUMENT", `${where}: analyzeFps must be a number of frames per second from above 0 to 60, not ${JSON.stringify(analyzeFps)}`);
  let start = new Date();
  if (startTime !== undefined) {
    start = new Date(String(startTime));
    if (Number.isNaN(start.getTime())) throw new ObscuraError("INVALID_ARGUMENT", `${where}: startTime ${JSON.stringify(startTime)} is not an ISO 8601 timestamp`);
  }
  const { params } = parseVehicleParams(rest, where);
  return { videoIn: VIDEO_IN, sensors, analyzeFps: fps, startTime: start, params };
}

/** Runs the File entry point; stores the events unless `store: false`. */
export async function runFilePipeline(raw: unknown, opts: { store?: boolean; onProgress?: (done: number, total: number) => void; signal?: AbortSignal } = {}): Promise<PipelineResult> {
  const t0 = Date.now();
  const cfg = pipelineConfig(raw);
  const info = await probe(cfg.videoIn, { signal: opts.signal });
  if (!info.video) throw new ObscuraError("INVALID_ARGUMENT", `VIDEO_IN ${JSON.stringify(cfg.videoIn)} has no video stream`);
  const fps = info.video.fps || 25;
  const stride = Math.max(1, Math.round(fps / cfg.analyzeFps));
  const enabled = new Set<string>(cfg.params.enabledClasses);
  const profile = trackingProfile("gen6_standard", fps / stride);
  const tracker = new Tracker(trackerParams(profile, { objects: cfg.params.detectionMinConfidence, inner: cfg.params.detectionMinConfidence }));
  const engine = new SensorEngine(cfg.sensors, { width: info.video.displayWidth, height: info.video.displayHeight });
  const detector = new CocoDetector();
  const events: SensorEventInput[] = [];
  let analysed = 0;
  let step = 0;
  for await (const frame of decodeFrames(cfg.videoIn, info, { stride, signal: opts.signal })) {
    const found = (await detector.detect(frame.image, { threshold: cfg.params.detectionMinConfidence * 0.5 }))
      .filter((d) => d.type === "vehicle" && d.label && COCO_CLASS[d.label] && enabled.has(COCO_CLASS[d.label]!))
      .map((d) => ({ ...d, box: { x: d.box.x / frame.scale, y: d.box.y / frame.scale, width: d.box.width / frame.scale, height: d.box.height / frame.scale } }))
      .sort((a, b) => b.score - a.score);
    const live = tracker.update(step++, nms(found, cfg.params.detectionOverlapThreshold));
    const timeMs = Math.round((frame.index / fps) * 1000);
    const tracks = live.map((t) => ({ id: t.id, type: COCO_CLASS[t.label ?? "car"] ?? "car", box: t.box }));
    for (const e of engine.update(timeMs, tracks)) {
      events.push({
        workspaceId: cfg.sensors.workspaceId,
        deviceId: cfg.sensors.deviceId,
        streamId: cfg.sensors.streamId,
        sensorId: e.sensorId,
        sensorName: e.sensorName,
        sensorType: e.sensorType,
        direction: e.direction,
        objectType: e.objectType,
        uniqueId: e.uniqueId,
        model: "coco-centernet",
        value: e.value,
        timeCollected: new Date(cfg.startTime.getTime() + e.timeMs),
        data: e.data,
      });
    }
    analysed++;
    opts.onProgress?.(frame.index + 1, info.video.frameCount);
  }
  if (opts.store !== false && events.length) await insertEvents(events);
  return { frames: info.video.frameCount, analysedFrames: analysed, events, seconds: (Date.now() - t0) / 1000 };
}
