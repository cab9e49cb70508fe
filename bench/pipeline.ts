/**
 * Analytics pipeline speed and memory. Writes bench/results/pipeline.json.
 *   node --import tsx bench/pipeline.ts [--seconds 10] [--rtsp-seconds 60] [--parts fps,rtsp]
 * - fps: a 720p 25 fps clip (a real car photo from ../shared/data/plates-us panning, or the
 *   synthetic car scene without it) through the File pipeline with the default parameters
 *   (vehicles and plates, detectionModel gen7es) and with vehicles only; frames analysed per second
 *   and the share of real time.
 * - rtsp: the same clip served by an RTSP server on loopback (rtsp-streaming-server; ffmpeg
 *   publishes it at its real rate, looped) and read by the RTSP pipeline with the spec's defaults
 *   (fpsLimit 20, resizeToSize 720, maxQueueSize 200) for --rtsp-seconds, vehicles only (keeps
 *   up) and with plates (slower than the stream: the lossy queue fills, 200 frames of 720p RGB are
 *   ~550 MB, and drops the oldest); the process's memory (RSS) sampled every 5 s, frames read,
 *   analysed and dropped; growth is measured from 20 s on.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { Pipeline } from "../server/analytics/pipeline";
import { runFfmpeg } from "../server/media";
import { ffmpegPath } from "../server/media/binaries";
import { carSvg } from "../test/helpers/scenes";
import { freePort } from "../test/helpers/storage-servers";
import { tempDir } from "../test/helpers/server";

const arg = (name: string) => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : undefined);
const seconds = Number(arg("seconds")) || 10;
const rtspSeconds = Number(arg("rtsp-seconds")) || 60;
const parts = (arg("parts") ?? "fps,rtsp").split(",");
const dir = tempDir("bench-pipeline");
process.env.OBSCURA_DATA_DIR ??= path.join(dir, "data");

// a real car photo when the evaluation data is there
const plates = path.resolve("..", "shared", "data", "plates-us");
const photo = fs.existsSync(plates) ? fs.readdirSync(plates).filter((f) => f.endsWith(".jpg")).sort()[0] : undefined;
const scene = path.join(dir, "scene.png");
if (photo) await sharp(path.join(plates, photo)).resize(1600, 1000, { fit: "cover" }).png().toFile(scene);
else await sharp(Buffer.from(carSvg({ x: 300, y: 380, width: 200, height: 100 }))).resize(1600, 1000).png().toFile(scene);
const clip = path.join(dir, "clip720.mp4");
await runFfmpeg(["-loop", "1", "-framerate", "25", "-i", scene, "-t", String(seconds), "-vf", "crop=1280:720:'t*30':140,format=yuv420p", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", clip]);
const results: Record<string, unknown> = { source: photo ? `plates-us/${photo} panning at 30 px/s` : "synthetic car scene", clip: { width: 1280, height: 720, fps: 25, seconds } };

if (parts.includes("fps")) {
  // warm-up: models converted and loaded outside the timing
  await (await Pipeline.create({ entryPoint: "ImageLoop", VIDEO_IN: scene, loopCount: 2, storeEvents: false })).run();
  const fps: Record<string, unknown> = {};
  for (const [name, enabledClasses] of [["default (vehicles + plates)", undefined], ["vehicles only", "car,bus,truck,motorbike"]] as const) {
    const p = await Pipeline.create({ VIDEO_IN: clip, storeEvents: false, ...(enabledClasses ? { enabledClasses } : {}) }, { onProgress: (s) => process.stderr.write(`\r[bench] pipeline ${name}: ${s.framesAnalysed} frames   `) });
    const t0 = performance.now();
    const s = await p.run();
    const wall = (performance.now() - t0) / 1000;
    fps[name] = { frames: s.framesAnalysed, seconds: Math.round(wall * 10) / 10, fps: Math.round((s.framesAnalysed / wall) * 100) / 100, realTime: Math.round((s.framesAnalysed / wall / 25) * 1000) / 1000, medianFrameMs: s.frameMs, outputs: s.outputs };
    process.stderr.write("\n");
  }
  results.fps = fps;
}

if (parts.includes("rtsp")) {
  const ports = { server: await freePort(), client: await freePort() };
  const mod = (await import("rtsp-streaming-server")) as unknown as { default: { default?: unknown } };
  const RtspServer = (mod.default.default ?? mod.default) as new (o: unknown) => { start(): Promise<void> };
  const server = new RtspServer({ serverPort: ports.server, clientPort: ports.client, rtpPortStart: 31000, rtpPortCount: 400 });
  await server.start();
  const pub = spawn(ffmpegPath(), ["-hide_banner", "-loglevel", "error", "-re", "-stream_loop", "-1", "-i", clip, "-c:v", "copy", "-f", "rtsp", `rtsp://127.0.0.1:${ports.server}/cam`], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 2000));
  const rtsp: Record<string, unknown> = {};
  // vehicles only keeps up with fpsLimit 20; with plates the analysis is slower than the stream and the lossy queue drops frames
  for (const [name, enabledClasses] of [["vehicles only", "car,bus,truck,motorbike"], ["vehicles + plates (slower than the stream)", undefined]] as const) {
    const p = await Pipeline.create({ VIDEO_IN: `rtsp://127.0.0.1:${ports.client}/cam`, rtspUseTCP: false, storeEvents: false, ...(enabledClasses ? { enabledClasses } : {}) });
    const ctl = new AbortController();
    const run = p.run(ctl.signal);
    const samples: Array<{ t: number; rssMB: number; read: number; analysed: number; dropped: number; queue: number }> = [];
    const t0 = Date.now();
    while (Date.now() - t0 < rtspSeconds * 1000) {
      await new Promise((r) => setTimeout(r, 5000));
      const s = p.status();
      samples.push({ t: Math.round((Date.now() - t0) / 1000), rssMB: Math.round(process.memoryUsage().rss / 2 ** 20), read: s.framesRead, analysed: s.framesAnalysed, dropped: s.framesDropped, queue: s.queueLength });
      process.stderr.write(`\r[bench] rtsp ${name} ${samples.at(-1)!.t} s: rss ${samples.at(-1)!.rssMB} MB, read ${s.framesRead}, analysed ${s.framesAnalysed}, dropped ${s.framesDropped}, queue ${s.queueLength}   `);
    }
    ctl.abort();
    const final = await run;
    process.stderr.write("\n");
    // from 20 s on (models loaded, a full queue has filled): memory should stay flat
    const settled = samples.filter((s) => s.t >= 20);
    const first = settled[0] ?? samples[0]!;
    const last = samples.at(-1)!;
    rtsp[name] = {
      seconds: rtspSeconds,
      parameters: { fpsLimit: 20, resizeToSize: 720, maxQueueSize: 200, transport: "udp" },
      framesRead: final.framesRead,
      framesAnalysed: final.framesAnalysed,
      framesDropped: final.framesDropped,
      reconnects: final.reconnects,
      readFps: Math.round((final.framesRead / rtspSeconds) * 10) / 10,
      analysedFps: Math.round((final.framesAnalysed / rtspSeconds) * 10) / 10,
      rssMB: { at20s: first.rssMB, end: last.rssMB, max: Math.max(...samples.map((s) => s.rssMB)), growthFrom20s: Math.round(((last.rssMB - first.rssMB) / first.rssMB) * 1000) / 1000 },
      samples,
    };
  }
  pub.kill("SIGKILL");
  results.rtsp = rtsp;
}

const out = { date: new Date().toISOString(), machine: { cpus: os.cpus().length, loadavg: os.loadavg() }, ...results };
fs.mkdirSync(path.join("bench", "results"), { recursive: true });
fs.writeFileSync(path.join("bench", "results", "pipeline.json"), JSON.stringify(out, null, 2) + "\n");
console.log(JSON.stringify(out, null, 2));
process.exit(0);
