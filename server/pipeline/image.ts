/**
 * The image pipeline: fetch, read size and orientation, hash, detect (server/vision, upright image),
 * render a redacted JPG (the detections drawn in MOSAIC, EXIF orientation applied, metadata
 * stripped; docs/rendering.md) when MEDIA_RENDER is asked, and with exportMetadata a JSON of the
 * raw detection data next to it (docs/state.md).
 */
import path from "node:path";
import { ObscuraError } from "@/lib/errors";
import { DETECTION_FEATURES } from "@/lib/api/common";
import type { ImageJobSpec } from "@/lib/api/image";
import { decodeImageRgb, hashFile, imageInfo } from "../media";
import { DEFAULT_STYLE, renderRedactedJpeg } from "../render";
import { DEFAULT_ENGINE_SETTINGS, detectImage, featureSupport } from "../vision/engine";
import { log } from "../log";
import { downloadToFile, redactUri, uploadFile, writeBytes } from "../storage";
import { siblingUri } from "@/lib/storage-uri";
import type { PipelineContext, PipelineResult } from "./context";
import { checkImageLeaks, leakCheckEnabled, leakSummary, type LeakReport } from "./leak-check";

/** The output's name with `.json` in place of its extension (`.../image.jpg` -> `.../image.json`), keeping a SAS query. */
export const metadataUriFor = (outputUri: string): string => siblingUri(outputUri, ".json");

const round1 = (v: number) => Math.round(v * 10) / 10;

export async function runImagePipeline(ctx: PipelineContext, spec: ImageJobSpec): Promise<PipelineResult> {
  const { signal } = ctx;
  const render = spec.features.includes("MEDIA_RENDER");
  const leakCheck = render && leakCheckEnabled(spec.render.leakCheck);
  const progress = ctx.progress([
    ["fetch", 50],
    ["probe", 5],
    ["detect", 5],
    ["render", render ? 30 : 0],
    ["leakcheck", leakCheck ? 5 : 0],
    ["save", 10],
  ]);
  progress.stage("fetch");
  const source = path.join(ctx.workDir, "source");
  await downloadToFile(spec.inputUri, source, { signal, onProgress: (b, t) => t && progress.update(b / t) });
  progress.stage("probe");
  let info;
  try {
    info = await imageInfo(source);
  } catch {
    throw new ObscuraError("INVALID_ARGUMENT", "inputUri is not a readable image (JPEG, PNG, WebP, GIF, TIFF or AVIF)");
  }
  const hashes = await hashFile(source, ["sha256"], { signal });
  progress.stage("detect");
  const support = featureSupport(spec.features);
  const found = support.supported.length ? await detectImage(await decodeImageRgb(source), support.supported) : [];
  if (support.missing.length) log.warn("no detector installed for some requested features", { features: support.missing });
  const objects = found.map((d) => ({
    type: d.type,
    score: Math.round(d.score * 1e4) / 1e4,
    boundingBox: { x: round1(d.box.x), y: round1(d.box.y), width: round1(d.box.width), height: round1(d.box.height) },
    ...(d.label ? { label: d.label } : {}),
  }));
  progress.stage("render");
  const output = path.join(ctx.workDir, "image.jpg");
  // The image request has no redaction settings: RenderConfig's defaults (MOSAIC, RECTANGLE, MEDIUM).
  if (render) await renderRedactedJpeg(await decodeImageRgb(source), found, output, { quality: spec.render.imageQuality });
  // Leak check: the JPG as written, scanned again (leak-check.ts; images are drawn in DEFAULT_STYLE).
  let leaks: LeakReport | null = null;
  if (leakCheck) {
    progress.stage("leakcheck");
    leaks = await checkImageLeaks(await decodeImageRgb(output), found, { features: support.supported, settings: DEFAULT_ENGINE_SETTINGS, style: DEFAULT_STYLE });
  }
  progress.stage("save");
  if (render) await uploadFile(output, spec.outputUri, { signal, contentType: "image/jpeg" });
  if (spec.render.exportMetadata) {
    const metadata = {
      image: { width: info.width, height: info.height, format: info.format, orientation: info.orientation },
      objects,
      schema: "obscura.image-metadata/v1",
      inputUri: redactUri(spec.inputUri),
      hashes: { original: hashes },
      features: spec.features.filter((f) => (DETECTION_FEATURES as readonly string[]).includes(f)),
      detectors: support.detectors,
      missingFeatures: support.missing,
      rendered: render,
      ...(leaks ? { leakCheck: { ...leakSummary(leaks), maxCoverage: leaks.maxCoverage, detectors: leaks.detectors }, leaks: leaks.leaks, dismissed: leaks.dismissed } : {}),
    };
    await writeBytes(metadataUriFor(spec.outputUri), JSON.stringify(metadata, null, 2) + "\n", { contentType: "application/json", signal });
    if (!render) return { outputUri: metadataUriFor(spec.outputUri) };
  }
  return { outputUri: spec.outputUri, leakCheck: leaks ? leakSummary(leaks) : null };
}
