/**
 * `obscura redact <input> [-o <output>] [options]`: the server's detection and render path on one
 * local file, without a server, a database or a queue (docs/cli.md).
 *
 * Videos: detectVideo (server/vision/video.ts) -> tracks -> renderVideo (server/render) -> MP4,
 * then the leak check (server/pipeline/leak-check.ts). Images (JPEG, PNG, WebP, ...): detectImage
 * -> redacted JPG -> leak check. Options are validated by the API's own zod schemas (lib/api), so
 * a bad value gets the API's message, prefixed with the option's name.
 *
 * stdout carries only the --json document; progress, the summary and logs go to stderr.
 * Exit codes: 0 done, 1 processing failed (unreadable input, ffmpeg error ...), 2 usage error.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import type { z as Z } from "zod";
import type { StyleConfig } from "@/server/render";
import type { LeakReport } from "@/server/pipeline/leak-check";

const ROOT = path.resolve(import.meta.dirname, "..");
// Models are converted once into <data dir>/models: use the repository's data dir from anywhere.
process.env.OBSCURA_DATA_DIR ||= path.join(ROOT, "data");

const { z } = await import("zod");
const { DETECTION_FEATURES } = await import("@/lib/api/common");
const { processConfigSchema, renderConfigSchema, VIDEO_PRESETS } = await import("@/lib/api/video");
const { configureLog } = await import("@/server/log");

class UsageError extends Error {}

const HELP = `Usage: obscura redact <input video or image> [-o <output>] [options]

Detects faces, licence plates (or the --features you name) in a local video or image and writes a
redacted copy: an MP4 for videos, a JPG for images. Same engine as the Obscura server; no server,
database or network needed.

Options:
  -o, --output <file>        output file (default: <input name>.redacted.mp4 / .jpg next to the input)
  --features <list>          comma-separated detection features (default FACE_DETECTION,LICENSE_PLATE_DETECTION):
                             ${DETECTION_FEATURES.join(", ")}
  --style <style>            OUTLINE, FILL, PIXELATE, BLUR, MOSAIC, SMART (default MOSAIC)
  --shape <shape>            RECTANGLE, ELLIPSE (default RECTANGLE)
  --intensity <level>        LOW, MEDIUM, HIGH (default MEDIUM)
  --color <#RRGGBB>          colour of FILL and OUTLINE (default #9F0500)
  --mask-audio <mask>        SILENCE, BEEP, SCRAMBLE (default: audio kept)
  --mask-audio-params <p,i>  SCRAMBLE's pitch and inversion, each -1..1 (default 0.32,-0.24)
  --profile <name>           gen6_standard (default), gen6_highMotion, gen6_conference, gen5_standard, gen5_highMotion
  --threshold <0..1>         objectsConfidenceThreshold: people, vehicles (default 0.3)
  --inner-threshold <0..1>   innerObjectsConfidenceThreshold: faces, plates, ... (default 0.15)
  --face-box-expansion <1..5> faceBoxExpansionFactor (default 1.5)
  --quality <0..1>           videoQuality (CRF = round(40 - 26 q)) or JPEG quality for images (default 0.65)
  --preset <preset>          x264 preset: ${VIDEO_PRESETS.join(", ")} (default ULTRAFAST)
  --no-leak-check            do not scan the output again for possible leaks
  --json                     print the detections (tracks or objects) and the leak report as JSON on stdout
  --verbose                  log lines (JSON) on stderr
  -h, --help                 this help

Exit codes: 0 done, 1 processing failed, 2 usage error (bad option or value). docs/cli.md has examples.
`;

/** Which option sets which API field (messages name the option the user typed). */
const OPTION_OF: Record<string, string> = {
  redactionStyle: "--style",
  redactionShape: "--shape",
  redactionIntensity: "--intensity",
  redactionColor: "--color",
  maskAudio: "--mask-audio",
  maskAudioParams: "--mask-audio-params",
  videoQuality: "--quality",
  videoPreset: "--preset",
  profileName: "--profile",
  objectsConfidenceThreshold: "--threshold",
  innerObjectsConfidenceThreshold: "--inner-threshold",
  faceBoxExpansionFactor: "--face-box-expansion",
};

const numberOrText = (v: string) => (v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v);

/** Validates one API object with its schema; the first problem becomes a UsageError naming the option and value. */
function validate<T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } }, value: Record<string, unknown>, raw: Record<string, string>): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = String(issue.path[0] ?? "");
  const option = OPTION_OF[field] ?? field;
  throw new UsageError(`${option} ${JSON.stringify(raw[field] ?? "")}: ${issue.message}`);
}

export interface Parsed {
  input: string;
  output: string | null;
  features: string[];
  process: { objectsConfidenceThreshold?: number; innerObjectsConfidenceThreshold?: number; faceBoxExpansionFactor?: number; profileName?: string };
  render: Z.infer<typeof renderConfigSchema>;
  leakCheck: boolean;
  json: boolean;
  verbose: boolean;
}

function parse(argv: string[]): Parsed | "help" {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        output: { type: "string", short: "o" },
        features: { type: "string" },
        style: { type: "string" },
        shape: { type: "string" },
        intensity: { type: "string" },
        color: { type: "string" },
        "mask-audio": { type: "string" },
        "mask-audio-params": { type: "string" },
        profile: { type: "string" },
        threshold: { type: "string" },
        "inner-threshold": { type: "string" },
        "face-box-expansion": { type: "string" },
        quality: { type: "string" },
        preset: { type: "string" },
        "no-leak-check": { type: "boolean" },
        json: { type: "boolean" },
        verbose: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ""));
  }
  const { values: v, positionals } = parsed;
  if (v.help) return "help";
  const [command, input, ...extra] = positionals;
  if (!command) throw new UsageError("no command given; the command is `redact` (obscura redact <input> -o <output>)");
  if (command !== "redact") throw new UsageError(`unknown command ${JSON.stringify(command)}; the command is \`redact\``);
  if (!input) throw new UsageError("no input given: obscura redact <input video or image> -o <output>");
  if (extra.length) throw new UsageError(`one input at a time; unexpected ${extra.map((x) => JSON.stringify(x)).join(", ")}`);

  const featureSchema = z.enum(DETECTION_FEATURES, { error: `features items must be one of ${DETECTION_FEATURES.join(", ")}` });
  const features = (v.features ?? "FACE_DETECTION,LICENSE_PLATE_DETECTION")
    .split(",")
    .map((f) => f.trim())
    .filter(Boolean);
  if (!features.length) throw new UsageError(`--features "${v.features}": name at least one of ${DETECTION_FEATURES.join(", ")}`);
  for (const f of features) {
    const r = featureSchema.safeParse(f.toUpperCase());
    if (!r.success) throw new UsageError(`--features ${JSON.stringify(f)}: ${r.error.issues[0]!.message}`);
  }

  const upper = (s: string | undefined) => s?.toUpperCase();
  const rawRender: Record<string, string> = {};
  const renderIn: Record<string, unknown> = {};
  const put = (field: string, raw: string | undefined, value: unknown) => {
    if (raw === undefined) return;
    rawRender[field] = raw;
    renderIn[field] = value;
  };
  put("redactionStyle", v.style, upper(v.style));
  put("redactionShape", v.shape, upper(v.shape));
  put("redactionIntensity", v.intensity, upper(v.intensity));
  put("redactionColor", v.color, v.color);
  put("maskAudio", v["mask-audio"], upper(v["mask-audio"]));
  put("maskAudioParams", v["mask-audio-params"], v["mask-audio-params"]?.split(",").map((x) => numberOrText(x.trim())));
  put("videoQuality", v.quality, v.quality === undefined ? undefined : numberOrText(v.quality));
  put("videoPreset", v.preset, upper(v.preset));
  const render = validate(renderConfigSchema, renderIn, rawRender);

  const rawProcess: Record<string, string> = {};
  const processIn: Record<string, unknown> = {};
  const putP = (field: string, raw: string | undefined, value: unknown) => {
    if (raw === undefined) return;
    rawProcess[field] = raw;
    processIn[field] = value;
  };
  putP("objectsConfidenceThreshold", v.threshold, v.threshold === undefined ? undefined : numberOrText(v.threshold));
  putP("innerObjectsConfidenceThreshold", v["inner-threshold"], v["inner-threshold"] === undefined ? undefined : numberOrText(v["inner-threshold"]));
  putP("faceBoxExpansionFactor", v["face-box-expansion"], v["face-box-expansion"] === undefined ? undefined : numberOrText(v["face-box-expansion"]));
  // profile names are case-sensitive in the API (gen6_highMotion): match them case-insensitively here
  const PROFILES = processConfigSchema.shape.profileName.unwrap().options as readonly string[];
  putP("profileName", v.profile, v.profile === undefined ? undefined : (PROFILES.find((p) => p.toLowerCase() === v.profile!.toLowerCase()) ?? v.profile));
  const process_ = validate(processConfigSchema, processIn, rawProcess);

  return {
    input,
    output: v.output ?? null,
    features: [...new Set(features.map((f) => f.toUpperCase()))],
    process: process_ as Parsed["process"],
    render,
    leakCheck: !v["no-leak-check"],
    json: !!v.json,
    verbose: !!v.verbose,
  };
}

// ---- progress on stderr -------------------------------------------------------------------------

const clock = (s: number) => {
  if (!Number.isFinite(s) || s < 0) return "--:--";
  const t = Math.round(s);
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const sec = String(t % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
};

/**
 * Weighted stages (like the server's StagedProgress), each measured in frames: a TTY gets one line
 * redrawn in place (percent, bar, stage, frames per second, time left), anything else a line
 * every 5 seconds and at each stage change.
 */
class ProgressBar {
  private readonly stages: Map<string, { start: number; weight: number; frames: number }> = new Map();
  private stage = "";
  private stageStarted = 0;
  private framesDone = 0;
  private percent = 0;
  private readonly t0 = performance.now();
  private lastDraw = 0;
  private readonly tty = !!process.stderr.isTTY;
  private drawn = false;

  constructor(stages: ReadonlyArray<readonly [string, number, number]>) {
    const total = stages.reduce((s, [, w]) => s + w, 0) || 1;
    let acc = 0;
    for (const [name, w, frames] of stages) {
      this.stages.set(name, { start: acc / total, weight: w / total, frames });
      acc += w;
    }
  }

  enter(name: string): void {
    this.stage = name;
    this.stageStarted = performance.now();
    this.framesDone = 0;
    this.update(0, true);
  }

  update(fraction: number, force = false): void {
    const s = this.stages.get(this.stage);
    if (!s) return;
    const f = Math.max(0, Math.min(1, fraction));
    this.framesDone = f * s.frames;
    this.percent = Math.max(this.percent, s.start + s.weight * f);
    const now = performance.now();
    if (!force && now - this.lastDraw < (this.tty ? 150 : 5000)) return;
    this.lastDraw = now;
    this.draw();
  }

  private line(): string {
    const elapsed = (performance.now() - this.t0) / 1000;
    const stageSeconds = (performance.now() - this.stageStarted) / 1000;
    const fps = stageSeconds > 0.2 ? this.framesDone / stageSeconds : 0;
    const eta = this.percent > 0.02 ? (elapsed * (1 - this.percent)) / this.percent : NaN;
    const pct = `${(this.percent * 100).toFixed(0).padStart(3)}%`;
    const width = 24;
    const full = Math.round(this.percent * width);
    const bar = this.tty ? ` [${"#".repeat(full)}${"-".repeat(width - full)}]` : "";
    return `${pct}${bar} ${this.stage.padEnd(10)} ${fps.toFixed(1).padStart(6)} frames/s  elapsed ${clock(elapsed)}  left ${clock(eta)}`;
  }

  private draw(): void {
    if (this.tty) {
      process.stderr.write(`\r${this.line()}\x1b[K`);
      this.drawn = true;
    } else process.stderr.write(this.line() + "\n");
  }

  done(): void {
    this.percent = 1;
    if (this.tty && this.drawn) process.stderr.write("\r\x1b[K");
  }
}

// ---- the work -------------------------------------------------------------------------------------

function defaultOutput(input: string, kind: "video" | "image"): string {
  const dir = path.dirname(input);
  const stem = path.basename(input, path.extname(input));
  return path.join(dir, `${stem}.redacted.${kind === "video" ? "mp4" : "jpg"}`);
}

async function run(opts: Parsed): Promise<void> {
  configureLog({ stderrOnly: true, minLevel: opts.verbose ? "debug" : "warn" });
  const input = path.resolve(opts.input);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(input);
  } catch {
    throw new Error(`cannot read the input ${opts.input}: no such file`);
  }
  if (!stat.isFile()) throw new Error(`cannot read the input ${opts.input}: not a file`);

  const { probe, decodeImageRgb } = await import("@/server/media");
  const { renderVideo, renderRedactedJpeg, DEFAULT_STYLE } = await import("@/server/render");
  const { detectVideo } = await import("@/server/vision/video");
  const { detectImage, featureSupport, DEFAULT_ENGINE_SETTINGS } = await import("@/server/vision/engine");
  const { checkVideoLeaks, checkImageLeaks, leakSummary } = await import("@/server/pipeline/leak-check");
  const { videoJobSpec } = await import("@/lib/api/video");

  let media;
  try {
    media = await probe(input);
  } catch (e) {
    const msg = (e as Error).message;
    const detail = /\((.*)\)\s*$/.exec(msg)?.[1] ?? msg;
    throw new Error(`${opts.input} is not a readable video or image (${detail})`);
  }
  const output = path.resolve(opts.output ?? defaultOutput(input, media.kind));
  if (output === input) throw new UsageError("the output must not be the input file");
  fs.mkdirSync(path.dirname(output), { recursive: true });

  // The API's defaults, applied by the same function the server uses.
  const spec = videoJobSpec(
    { inputUri: "file:///cli", features: opts.features as never, videoContext: { processConfig: opts.process as never, renderConfig: opts.render } },
    { projectId: "cli", sessionId: "cli" },
  );
  const settings = { ...DEFAULT_ENGINE_SETTINGS, ...spec.process };
  const support = featureSupport(opts.features);
  if (support.missing.length) process.stderr.write(`obscura: no detector installed for ${support.missing.join(", ")}: nothing is searched for them\n`);
  const t0 = performance.now();
  const partial = path.join(path.dirname(output), `.${path.basename(output)}.partial-${process.pid}${media.kind === "video" ? ".mp4" : ".jpg"}`);
  const cleanup = () => fs.rmSync(partial, { force: true });
  process.once("SIGINT", () => {
    cleanup();
    process.exit(130);
  });

  try {
    if (media.kind === "video") {
      const frames = Math.max(1, media.video.frameCount);
      const bar = new ProgressBar([
        ["detect", 45, frames],
        ["render", 25, frames],
        ["leakcheck", opts.leakCheck ? 30 : 0, frames],
      ]);
      bar.enter("detect");
      const detected = await detectVideo(input, media, support.supported, settings, { onProgress: (x) => bar.update(x) });
      bar.enter("render");
      const rendered = await renderVideo(input, partial, { info: media, tracks: detected.tracks, config: spec.render, onProgress: (x) => bar.update(x) });
      let report = null;
      if (opts.leakCheck) {
        bar.enter("leakcheck");
        report = await checkVideoLeaks(partial, {
          tracks: detected.tracks,
          boxSpace: { width: media.video.displayWidth, height: media.video.displayHeight },
          fps: media.video.fps,
          style: spec.render,
          features: support.supported,
          settings: spec.process,
          onProgress: (x) => bar.update(x),
        });
      }
      bar.done();
      fs.renameSync(partial, output);
      const seconds = (performance.now() - t0) / 1000;
      const byType = new Map<string, number>();
      for (const t of detected.tracks) byType.set(t.type, (byType.get(t.type) ?? 0) + 1);
      const found = [...byType].map(([t, n]) => `${n} ${t}`).join(", ") || "nothing";
      process.stderr.write(`obscura: ${path.relative(process.cwd(), output) || output}: ${rendered.frames} frames, redacted ${found} (tracks) in ${seconds.toFixed(1)} s\n`);
      if (report) printLeaks(report, true);
      if (opts.json) {
        const doc = {
          input,
          output,
          kind: "video",
          media: { width: media.video.displayWidth, height: media.video.displayHeight, fps: media.video.fps, frameCount: media.video.frameCount, durationSeconds: media.durationSeconds },
          features: support.supported,
          detectors: detected.detectors,
          missingFeatures: detected.missingFeatures,
          profile: detected.profile,
          render: spec.render,
          tracks: detected.tracks,
          leakCheck: report ? { ...leakSummary(report), maxCoverage: report.maxCoverage, detectionStride: report.detectionStride } : null,
          leaks: report?.leaks ?? null,
          dismissed: report?.dismissed ?? null,
        };
        process.stdout.write(JSON.stringify(doc, null, 2) + "\n");
      }
    } else {
      const bar = new ProgressBar([
        ["detect", 60, 1],
        ["render", 10, 1],
        ["leakcheck", opts.leakCheck ? 30 : 0, 1],
      ]);
      bar.enter("detect");
      const image = await decodeImageRgb(input);
      const found = support.supported.length ? await detectImage(image, support.supported, settings) : [];
      bar.enter("render");
      // Images take the CLI's style options too (the image API has none and uses the defaults).
      const style = { ...DEFAULT_STYLE, ...pickStyle(spec.render) };
      await renderRedactedJpeg(image, found, partial, { quality: opts.render.videoQuality ?? 0.65, style });
      let report = null;
      if (opts.leakCheck) {
        bar.enter("leakcheck");
        report = await checkImageLeaks(await decodeImageRgb(partial), found, { features: support.supported, settings, style });
      }
      bar.done();
      fs.renameSync(partial, output);
      const seconds = (performance.now() - t0) / 1000;
      process.stderr.write(`obscura: ${path.relative(process.cwd(), output) || output}: redacted ${found.length} object(s) in ${seconds.toFixed(1)} s\n`);
      if (report) printLeaks(report, false);
      if (opts.json) {
        const round = (v: number) => Math.round(v * 10) / 10;
        const doc = {
          input,
          output,
          kind: "image",
          media: { width: image.width, height: image.height },
          features: support.supported,
          detectors: support.detectors,
          missingFeatures: support.missing,
          objects: found.map((d) => ({
            type: d.type,
            score: Math.round(d.score * 1e4) / 1e4,
            boundingBox: { x: round(d.box.x), y: round(d.box.y), width: round(d.box.width), height: round(d.box.height) },
            ...(d.label ? { label: d.label } : {}),
          })),
          leakCheck: report ? { ...leakSummary(report), maxCoverage: report.maxCoverage } : null,
          leaks: report?.leaks ?? null,
          dismissed: report?.dismissed ?? null,
        };
        process.stdout.write(JSON.stringify(doc, null, 2) + "\n");
      }
    }
  } catch (e) {
    cleanup();
    throw e;
  }
}

function pickStyle(r: StyleConfig): StyleConfig {
  return { redactionStyle: r.redactionStyle, redactionShape: r.redactionShape, redactionIntensity: r.redactionIntensity, redactionColor: r.redactionColor };
}

function printLeaks({ leaks, dismissed, framesScanned }: Pick<LeakReport, "leaks" | "dismissed" | "framesScanned">, video: boolean): void {
  const aside = dismissed.length ? ` (${dismissed.length} weak face hit(s) dismissed: FaceMesh saw no face)` : "";
  process.stderr.write(`obscura: leak check: ${leaks.length} possible leak(s) in ${framesScanned} scanned frame(s)${aside}\n`);
  for (const l of leaks.slice(0, 20)) {
    const when = video ? ` at ${l.firstTime.toFixed(2)}-${l.lastTime.toFixed(2)} s` : "";
    const b = l.box;
    process.stderr.write(`  possible leak: ${l.type}${when}, box x=${b.x} y=${b.y} ${b.width}x${b.height}, score ${l.score}\n`);
  }
  if (leaks.length > 20) process.stderr.write(`  ... and ${leaks.length - 20} more (--json lists them all)\n`);
}

async function main(): Promise<number> {
  let opts: Parsed | "help";
  try {
    opts = parse(process.argv.slice(2));
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`obscura: ${e.message}\nRun \`obscura --help\` for the options.\n`);
      return 2;
    }
    throw e;
  }
  if (opts === "help") {
    process.stdout.write(HELP);
    return 0;
  }
  try {
    await run(opts);
    return 0;
  } catch (e) {
    if (process.stderr.isTTY) process.stderr.write("\n"); // below a progress line
    if (e instanceof UsageError) {
      process.stderr.write(`obscura: ${e.message}\n`);
      return 2;
    }
    process.stderr.write(`obscura: ${e instanceof Error ? e.message : String(e)}\n`);
    if (opts.verbose && e instanceof Error && e.stack) process.stderr.write(e.stack + "\n");
    return 1;
  }
}

process.exitCode = await main();
