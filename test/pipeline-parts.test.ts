/**
 * The analytics pipeline's parts (issue 10; docs/pipeline.md): box filters and the update strategy
 * as units; then the real engine over ImageLoop (with extension modules, image and debug outputs,
 * the performance CSV and AMQP to the RabbitMQ server on 127.0.0.1:5672), FolderWatch, and RTSP
 * from an RTSP server on loopback (rtsp-streaming-server, ffmpeg publishing) with recordTo,
 * reconnects and a lost stream.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import amqp from "amqplib";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pipelineConfig } from "@/server/analytics/config";
import { applyBoxFilters, parseBoxFilters } from "@/server/analytics/filters";
import { Pipeline } from "@/server/analytics/pipeline";
import { type FrameOutput, StreamState } from "@/server/analytics/stream";
import type { Analysis, PlateResult, VehicleResult } from "@/server/vehicle/analyze";
import { ffmpegPath } from "@/server/media/binaries";
import { runFfmpeg } from "@/server/media";
import { carSvg } from "./helpers/cars";
import { useModelDataDir } from "./helpers/models";
import { tempDir } from "./helpers/server";
import { freePort } from "./helpers/storage-servers";

useModelDataDir("pipeline");

let dir = "";
let image = "";
beforeAll(async () => {
  dir = tempDir("pipeline-parts");
  image = path.join(dir, "car.png");
  await sharp(Buffer.from(carSvg("#1f5fbf", "7XYZ482", 0, 1))).png().toFile(image);
}, 60_000);

describe("box filters", () => {
  const frame = { width: 1000, height: 500 };
  const boxes = [
    { cls: "car", box: { x: 100, y: 100, width: 100, height: 100 } },
    { cls: "car", box: { x: 450, y: 100, width: 100, height: 100 } }, // half inside x >= 500
    { cls: "licenseplate", box: { x: 600, y: 300, width: 40, height: 10 } },
  ];
  const keep = (filters: unknown[]) => applyBoxFilters(parseBoxFilters(filters), boxes, frame).map((b) => b.box.x);

  it("roi: boxInRoi / roiInBox, requiredOverlap, exclude, classes, relative units", () => {
    const right = [500, 0, 500, 500];
    expect(keep([{ type: "roi", region: right }])).toEqual([600]); // wholly inside only
    expect(keep([{ type: "roi", region: right, requiredOverlap: 50 }])).toEqual([450, 600]);
    expect(keep([{ type: "roi", region: right, requiredOverlap: 0 }])).toEqual([450, 600]);
    expect(keep([{ type: "roi", region: right, exclude: true }])).toEqual([100, 450]);
    expect(keep([{ type: "roi", region: [0.5, 0, 0.5, 1], requiredOverlap: 50 }])).toEqual([450, 600]); // 0-1 of the frame
    expect(keep([{ type: "roi", region: right, classes: ["licenseplate"] }])).toEqual([100, 450, 600]); // cars untouched
    // roiInBox: the region's share inside the box (a small region inside the first car)
    expect(keep([{ type: "roi", region: [120, 120, 20, 20], behavior: "roiInBox" }])).toEqual([100]);
  });

  it("size: dimension, width, height, area, aspectRatio in pixels or relative, 0 = no limit", () => {
    expect(keep([{ type: "size", subtype: "width", min: 50 }])).toEqual([100, 450]);
    expect(keep([{ type: "size", subtype: "area", max: 1000 }])).toEqual([600]);
    expect(keep([{ type: "size", subtype: "aspectRatio", min: 2 }])).toEqual([600]); // 4:1
    expect(keep([{ type: "size", subtype: "dimension", min: 0.09 }])).toEqual([100, 450]); // 0.09 x 1000 px
    expect(keep([{ type: "size", subtype: "height", min: 0.1, classes: ["car"] }])).toEqual([100, 450, 600]); // 50 px; plates untouched
  });
});

describe("update strategy and plate strings over time", () => {
  const veh = (x: number, plate: number | null = null): VehicleResult => ({ box: { x, y: 100, width: 200, height: 100 }, vehicleClass: "car", score: 0.9, color: { value: "blue", score: 0.8 }, makeModel: { make: "", model: "", generation: null, score: 0 }, plate });
  const plate = (x: number, text: string, score = 0.9, vehicle: number | null = 0): PlateResult => ({ box: { x, y: 170, width: 60, height: 15 }, quad: [[0, 0], [0, 0], [0, 0], [0, 0]], detectionScore: 0.8, text, textScore: score, region: "us", regionScore: 0.9, score, vehicle });
  const frame = (vehicles: VehicleResult[], plates: PlateResult[] = []): Analysis => ({ width: 1000, height: 500, vehicles, plates });
  const base = (t: number) => ({ frameDimensions: { w: 1000, h: 500 }, frameSource: "x", sourceId: "lpr-1", frameId: String(t), frameTimestamp: t, analyticsTimestamp: t, time_analytics_start: 0, time_analytics_complete: 0 });
  function run(cfg: Record<string, unknown>, frames: Analysis[], events: Record<number, unknown[]> = {}): Array<FrameOutput | null> {
    const c = pipelineConfig({ entryPoint: "Direct", ...cfg });
    const s = new StreamState(c, 10);
    return frames.map((a, i) => {
      s.update(a, i * 100);
      const { output, emit } = s.output(base(i * 100), events[i] ?? null, i * 100);
      return emit ? output : null;
    });
  }
  const emitted = (outs: Array<FrameOutput | null>) => outs.flatMap((o, i) => (o ? [i] : []));

  it("updateOnlyOnChange emits frames where an object came, went or changed; updateOnStart the first; updateAllowEmptyJSON the empty ones", () => {
    const frames = [frame([]), frame([veh(100)]), frame([veh(110)]), frame([veh(120)]), frame([]), frame([])];
    expect(emitted(run({}, frames))).toEqual([0, 1]); // start, car appears; moving is no change; gone = empty, not allowed
    expect(emitted(run({ updateAllowEmptyJSON: true }, frames))).toEqual([0, 1, 4]);
    expect(emitted(run({ updateOnStart: false }, frames))).toEqual([1]);
    expect(emitted(run({ updateOnlyOnChange: false }, frames))).toEqual([0, 1, 2, 3]);
    expect(emitted(run({ updateMinFrequencyMs: 200 }, frames))).toEqual([0, 1, 3]); // forced 200 ms after the last output
    expect(emitted(run({ updateOnlyOnEvents: true }, frames, { 2: [{ sensorId: "gate" }] }))).toEqual([2]);
    // a second car: the count of vehicles changes (and so does the set of objects)
    const two = [frame([veh(100)]), frame([veh(100), veh(600)]), frame([veh(100), veh(600)])];
    expect(emitted(run({ updateMinFrequencyMs: 0, updateOnMetaclassCountChange: "vehicles" }, two))).toEqual([0, 1]);
    const out = run({}, two)[1]!;
    expect(Object.keys(out.metaClasses.vehicles)).toEqual(["vehicle-1", "vehicle-2"]);
    expect(out.metaClasses.vehicles["vehicle-1"]!.updated).toBe(false);
    expect(out.metaClasses.vehicles["vehicle-2"]!.updated).toBe(true);
  });

  it("plates vote for their string over frames; lptStabilizationDelay with remove or update; lptStringMergeWindow keeps the id", () => {
    const reads = ["7XYZ482", "7XYZ4B2", "7XYZ482", "7XYZ482"];
    const frames = reads.map((t) => frame([veh(100, 0)], [plate(160, t)]));
    const outs = run({ updateOnlyOnChange: false, lptStabilizationDelay: 3, lptStabilizationStrategy: "remove" }, frames);
    expect(outs.map((o) => Object.keys(o!.metaClasses.licensePlates).length)).toEqual([0, 0, 1, 1]); // shown once read in 3 frames
    expect(outs[2]!.metaClasses.licensePlates["lp-1"]!.attributes.lpString!.value).toBe("7XYZ482"); // 2 votes to 1
    expect(outs[2]!.metaClasses.licensePlates["lp-1"]!.links).toEqual([{ metaClass: "vehicles", id: "vehicle-1" }]);
    const upd = run({ updateOnlyOnChange: false, lptStabilizationDelay: 3, lptStabilizationStrategy: "update" }, frames);
    expect(upd.map((o) => o!.metaClasses.licensePlates["lp-1"]?.attributes.lpString!.value)).toEqual(["7XYZ482", "7XYZ482", "7XYZ482", "7XYZ482"]);
    // the plate leaves for 3 frames and comes back elsewhere: the same string within the window is the same plate
    const gap = [frame([], [plate(100, "8ABC123", 0.9, null)]), frame([]), frame([]), frame([]), frame([], [plate(700, "8ABC123", 0.9, null)])];
    expect(Object.keys(run({ updateOnlyOnChange: false, updateAllowEmptyJSON: true }, gap)[4]!.metaClasses.licensePlates)).toEqual(["lp-1"]);
    expect(Object.keys(run({ updateOnlyOnChange: false, lptStringMergeWindow: 2 }, gap)[4]!.metaClasses.licensePlates)).toEqual(["lp-2"]);
  });
});

describe("ImageLoop with extension modules, outputs and AMQP", () => {
  it("analyses the image loopCount times; modules run in order; images, JSON, CSV written; each output published to RabbitMQ", async () => {
    const conn = await amqp.connect("amqp://guest:guest@127.0.0.1:5672");
    const ch = await conn.createChannel();
    const exchange = `obscura-test-${process.pid}-${Date.now()}`;
    await ch.assertExchange(exchange, "topic", { durable: false, autoDelete: true });
    const q = await ch.assertQueue("", { exclusive: true });
    await ch.bindQueue(q.queue, exchange, "cams.#");
    const received: Array<{ body: Record<string, unknown>; props: amqp.MessageProperties }> = [];
    await ch.consume(q.queue, (m) => m && received.push({ body: JSON.parse(m.content.toString()), props: m.properties }), { noAck: true });
    const first = path.join(dir, "first.mjs");
    const second = path.join(dir, "second.ts"); // TypeScript modules load too
    fs.writeFileSync(first, `let cfg = "";\nexport function configure(p) { cfg = p; }\nexport function process(tick, data, frame) { return { ...data, seen: [\`first:\${tick}:\${frame.width}x\${frame.height}:\${cfg}\`] }; }\n`);
    fs.writeFileSync(second, `type Data = { seen: string[] };\nexport default { process(tick: number, data: Data): Data { data.seen.push("second"); return data; } };\n`);
    const cfgFile = path.join(dir, "loop.yaml");
    const out = path.join(dir, "out");
    fs.writeFileSync(
      cfgFile,
      [
        "entryPoint: VehicleAnalyticsImageLoop.yaml",
        `VIDEO_IN: ${image}`,
        "loopCount: 3",
        "sourceId: cam-7",
        "enabledClasses: car,licenseplate",
        "updateOnlyOnChange: false",
        "extensionModules: first.mjs, second.ts",
        `imageSaveDir: ${out}/frames`,
        "imageWriterFormat: png",
        `outputPrefix: ${out}/annotated-`,
        "debugSettings: dumpJson,json,OSD,history",
        `debugOutputPath: ${out}/debug`,
        "performanceInfo: true",
        "includeAverageHardware: true",
        `performanceCSVFile: ${out}/perf.csv`,
        "amqpHost: 127.0.0.1",
        "amqpUser: guest",
        "amqpPassword: guest",
        `amqpExchange: ${exchange}`,
        "amqpRoutingKey: cams.7",
      ].join("\n"),
    );
    const p = await Pipeline.create(cfgFile, { configPath: cfgFile });
    const stats = await p.run();
    expect(stats).toMatchObject({ framesAnalysed: 3, outputs: 3, amqpPublished: 3, amqpFailed: 0 });
    const o = p.history[0]! as FrameOutput & { seen: string[] };
    expect(o.seen).toEqual([`first:0:800x500:${cfgFile}`, "second"]);
    expect(o.sourceId).toBe("cam-7");
    const [vehicle] = Object.values(o.metaClasses.vehicles);
    const [lp] = Object.values(o.metaClasses.licensePlates);
    expect(vehicle).toMatchObject({ class: "car", vehicleClass: "car", links: [{ metaClass: "licensePlates" }] });
    expect(lp!.attributes.lpString!.value).toBe("7XYZ482");
    expect(o.performance).toMatchObject({ frameMs: expect.any(Number), cpus: expect.any(Number), rssMB: expect.any(Number) });
    expect(o.links.map((l) => l.type)).toEqual(["frame", "annotated"]);
    // the same vehicle id across the loop
    expect(p.history.map((h) => Object.keys(h.metaClasses.vehicles))).toEqual([["vehicle-1"], ["vehicle-1"], ["vehicle-1"]]);
    expect(fs.readdirSync(path.join(out, "frames")).sort()).toEqual(["cam-7-0.png", "cam-7-1.png", "cam-7-2.png"]);
    expect((await sharp(path.join(out, "annotated-0.jpg")).metadata()).width).toBe(800);
    expect(JSON.parse(fs.readFileSync(path.join(out, "debug", "cam-7-2.json"), "utf8")).frameId).toBe("2");
    expect(fs.readFileSync(path.join(out, "debug", "cam-7.jsonl"), "utf8").trim().split("\n")).toHaveLength(3);
    const csv = fs.readFileSync(path.join(out, "perf.csv"), "utf8").trim().split("\n");
    expect(csv[0]).toBe("frameId,timestamp,analysisMs,frameMs,fps,vehicles,plates,queueLength,framesDropped");
    expect(csv).toHaveLength(4);
    // RabbitMQ got the three outputs
    for (let i = 0; i < 50 && received.length < 3; i++) await new Promise((r) => setTimeout(r, 100));
    expect(received.map((m) => m.body.frameId)).toEqual(["0", "1", "2"]);
    expect(received[0]!.props).toMatchObject({ contentType: "application/json", messageId: "cam-7-0", headers: { sourceId: "cam-7", frameId: "0", eventCount: 0 } });
    await conn.close();
  }, 120_000);

  it("an unreachable broker: dropped after amqpMaxRetries, or the pipeline stops with amqpErrorOnFailure", async () => {
    const port = await freePort();
    const cfg = { entryPoint: "ImageLoop", VIDEO_IN: image, loopCount: 1, enabledClasses: "car", amqpHost: "127.0.0.1", amqpPort: port, amqpMaxRetries: 1, amqpPassword: "s3cret" };
    const p = await Pipeline.create(cfg);
    expect(await p.run()).toMatchObject({ framesAnalysed: 1, amqpPublished: 0, amqpFailed: 1 });
    const err = await Pipeline.create({ ...cfg, amqpErrorOnFailure: true }).then(() => "", (e: Error) => e.message);
    expect(err).toMatch(new RegExp(`AMQP output amqp://127.0.0.1:${port}: cannot connect`));
    expect(err).not.toContain("s3cret");
  }, 60_000);
});

describe("FolderWatch", () => {
  it("takes new files in order, each a new stream (updateResetStateOnNewInput), and stops when idle", async () => {
    const watched = path.join(dir, "watched");
    fs.mkdirSync(watched);
    fs.copyFileSync(image, path.join(watched, "a.png"));
    const outputs: FrameOutput[] = [];
    const p = await Pipeline.create({ VIDEO_IN: watched, enabledClasses: "car", watchPollMs: 100, watchIdleStopMs: 3000 }, { onOutput: (o) => void outputs.push(o) });
    expect(p.config).toMatchObject({ entryPoint: "FolderWatch", updateOnlyOnChange: false });
    const done = p.run();
    await new Promise((r) => setTimeout(r, 1500));
    fs.copyFileSync(image, path.join(watched, "b.png"));
    fs.writeFileSync(path.join(watched, "notes.txt"), "not media");
    const stats = await done;
    expect(stats).toMatchObject({ inputs: 2, framesAnalysed: 2 });
    expect(outputs.map((o) => path.basename(o.frameSource))).toEqual(["a.png", "b.png"]);
    expect(outputs.map((o) => Object.keys(o.metaClasses.vehicles))).toEqual([["vehicle-1"], ["vehicle-1"]]); // ids start afresh per input
  }, 60_000);
});

describe("RTSP", () => {
  let server: { start(): Promise<void>; stop(): Promise<void> } | null = null;
  let publisher: ChildProcess | null = null;
  let ports = { server: 0, client: 0 };
  let clip = "";
  const publish = () => {
    publisher = spawn(ffmpegPath(), ["-hide_banner", "-loglevel", "error", "-re", "-stream_loop", "-1", "-i", clip, "-c:v", "copy", "-f", "rtsp", `rtsp://127.0.0.1:${ports.server}/cam`], { stdio: "ignore" });
  };
  const unpublish = async () => {
    const p = publisher;
    publisher = null;
    if (p && p.exitCode === null) {
      // SIGINT: ffmpeg ends the session with TEARDOWN (the server keeps a killed publisher's mount and refuses a new one with 503)
      const closed = new Promise((r) => p.once("close", r));
      p.kill("SIGINT");
      const t = setTimeout(() => p.kill("SIGKILL"), 5000);
      await closed;
      clearTimeout(t);
    }
  };

  beforeAll(async () => {
    clip = path.join(dir, "car.mp4");
    await runFfmpeg(["-loop", "1", "-framerate", "10", "-i", image, "-t", "4", "-vf", "scale=640:320", "-c:v", "libx264", "-preset", "ultrafast", "-g", "10", "-pix_fmt", "yuv420p", clip]);
    ports = { server: await freePort(), client: await freePort() };
    const mod = (await import("rtsp-streaming-server")) as unknown as { default: { default?: unknown } & (new (o: unknown) => typeof server) };
    const RtspServer = (mod.default.default ?? mod.default) as new (o: unknown) => NonNullable<typeof server>;
    server = new RtspServer({ serverPort: ports.server, clientPort: ports.client, rtpPortStart: 20000 + (process.pid % 100) * 400, rtpPortCount: 400 });
    await server.start();
    publish();
    await new Promise((r) => setTimeout(r, 1500));
  }, 60_000);

  afterAll(async () => {
    await unpublish();
    await (server as unknown as { stop?: () => Promise<void> } | null)?.stop?.().catch(() => {});
  });

  it("reads the stream at fpsLimit, records segments, reconnects when the stream drops, fails when it stays lost", async () => {
    const rec = path.join(dir, "rec");
    const url = `rtsp://127.0.0.1:${ports.client}/cam`;
    const p = await Pipeline.create({ VIDEO_IN: url, rtspUseTCP: false, fpsLimit: 4, resizeToSize: 160, enabledClasses: "car", recordTo: rec, recordInterval: 1000, rtspRetryCount: 5, rtspTimeoutMs: 2000, storeEvents: false, updateOnlyOnChange: false });
    expect(p.config.entryPoint).toBe("RTSP");
    const ctl = new AbortController();
    const outputs: FrameOutput[] = [];
    const p2 = p;
    const running = p2.run(ctl.signal);
    const t0 = Date.now();
    while (p2.status().framesAnalysed < 6 && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 200));
    const before = p2.status();
    expect(before.framesAnalysed).toBeGreaterThanOrEqual(6);
    // drop the stream, bring it back: the pipeline reconnects
    await unpublish();
    await new Promise((r) => setTimeout(r, 3500));
    publish();
    const t1 = Date.now();
    while (p2.status().reconnects < 1 || p2.status().framesAnalysed <= before.framesAnalysed + 3) {
      if (Date.now() - t1 > 40_000) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    ctl.abort();
    const s = await running;
    expect(s.reconnects).toBeGreaterThanOrEqual(1);
    expect(s.framesAnalysed).toBeGreaterThan(before.framesAnalysed + 3);
    void outputs;
    // frames at most 160 px high
    const segments = fs.readdirSync(rec).filter((f) => f.endsWith(".mp4"));
    expect(segments.length).toBeGreaterThanOrEqual(1);
    expect(s.segments).toBeGreaterThanOrEqual(1);
    // no stream at all: the configured retries, then a clear failure
    const lost = await Pipeline.create({ VIDEO_IN: `rtsp://user:pw@127.0.0.1:${ports.client}/nothing`, rtspUseTCP: false, rtspRetryCount: 1, rtspTimeoutMs: 1000, enabledClasses: "car", storeEvents: false });
    const err = await lost.run().then(() => "", (e: Error) => e.message);
    expect(err).toMatch(/RTSP source rtsp:\/\/\*\*\*@127\.0\.0\.1:\d+\/nothing lost: .* \(1 reconnection attempt failed; rtspRetryCount\)/);
  }, 120_000);
});
