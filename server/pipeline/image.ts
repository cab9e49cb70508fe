/**
 * The image pipeline: fetch, read size and orientation, hash, detect (no detector yet, issue 4),
 * render a JPG (EXIF orientation applied, metadata stripped) when MEDIA_RENDER is asked, and with
 * exportMetadata a JSON of the raw detection data next to it (docs/state.md).
 */
import path from "node:path";
import { ObscuraError } from "@/lib/errors";
import { DETECTION_FEATURES } from "@/lib/api/common";
import type { ImageJobSpec } from "@/lib/api/image";
import { hashFile, imageInfo, renderImageJpeg } from "../media";
import { downloadToFile, redactUri, uploadFile, writeBytes } from "../storage";
import type { PipelineContext } from "./context";

/** The output's name with `.json` in place of its extension (`.../image.jpg` -> `.../image.json`), keeping a SAS query. */
export function metadataUriFor(outputUri: string): string {
  const q = outputUri.indexOf("?");
  const base = q < 0 ? outputUri : outputUri.slice(0, q);
  const query = q < 0 ? "" : outputUri.slice(q);
  const slash = base.lastIndexOf("/");
  const dot = base.lastIndexOf(".");
  const stem = dot > slash + 1 ? base.slice(0, dot) : base;
  return stem + ".json" + query;
}

export async function runImagePipeline(ctx: PipelineContext, spec: ImageJobSpec): Promise<string> {
  const { signal } = ctx;
  const render = spec.features.includes("MEDIA_RENDER");
  const progress = ctx.progress([
    ["fetch", 50],
    ["probe", 5],
    ["detect", 5],
    ["render", render ? 30 : 0],
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
  const detectors: string[] = [];
  const detections: unknown[] = [];
  progress.stage("render");
  const output = path.join(ctx.workDir, "image.jpg");
  if (render) await renderImageJpeg(source, output, { quality: spec.render.imageQuality });
  progress.stage("save");
  if (render) await uploadFile(output, spec.outputUri, { signal, contentType: "image/jpeg" });
  if (spec.render.exportMetadata) {
    const metadata = {
      schema: "obscura.image-metadata/v1",
      inputUri: redactUri(spec.inputUri),
      image: { width: info.width, height: info.height, format: info.format, orientation: info.orientation },
      hashes: { original: hashes },
      features: spec.features.filter((f) => (DETECTION_FEATURES as readonly string[]).includes(f)),
      detectors,
      detections,
      rendered: render,
    };
    await writeBytes(metadataUriFor(spec.outputUri), JSON.stringify(metadata, null, 2) + "\n", { contentType: "application/json", signal });
    if (!render) return metadataUriFor(spec.outputUri);
  }
  return spec.outputUri;
}
