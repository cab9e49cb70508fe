/** Pure pieces of the service core: staged progress, operation names, request defaults, aliases. */
import { describe, expect, it } from "vitest";
import { StagedProgress, throttle } from "@/server/jobs/progress";
import { formatOperationName, parseOperationName } from "@/lib/api/operation";
import { parseBody } from "@/lib/api/parse";
import { videoJobSpec, videoProcessRequestSchema } from "@/lib/api/video";
import { normaliseFeatures } from "@/lib/api/common";
import { metadataUriFor } from "@/server/pipeline/image";
import { isObscuraError } from "@/lib/errors";

describe("StagedProgress", () => {
  it("weights stages and never goes backwards", () => {
    const seen: Array<[number, string]> = [];
    const p = new StagedProgress(
      [
        ["fetch", 1],
        ["render", 3],
        ["skip", 0],
      ],
      (pct, stage) => seen.push([pct, stage]),
    );
    p.stage("fetch");
    p.update(0.5);
    p.stage("render");
    p.update(0.5);
    p.update(0.2);
    p.update(1);
    expect(seen.map(([x]) => x)).toEqual([0, 12.5, 25, 62.5, 62.5, 100]);
    expect(seen.at(-1)![1]).toBe("render");
  });
  it("ignores NaN and clamps", () => {
    const out: number[] = [];
    const p = new StagedProgress([["a", 1]], (x) => out.push(x));
    p.stage("a");
    p.update(Number.NaN);
    p.update(7);
    expect(out).toEqual([0, 0, 100]);
  });
});

describe("throttle", () => {
  it("passes the first call, drops calls inside the interval, and always passes forced ones", () => {
    const calls: number[] = [];
    const t = throttle(60_000, (x: number) => calls.push(x));
    t(1);
    t(2);
    t.force(3);
    t(4);
    expect(calls).toEqual([1, 3]);
  });
});

describe("operation names", () => {
  it("round-trip and reject other shapes", () => {
    const n = { projectId: "my-project", locationId: "local", operationId: "abc" };
    expect(formatOperationName(n)).toBe("projects/my-project/locations/local/operations/abc");
    expect(parseOperationName(formatOperationName(n))).toEqual(n);
    expect(parseOperationName("projects/a/locations/b/operation/c")).toBeNull();
    expect(parseOperationName("projects/a/locations/b/operations/c/extra")).toBeNull();
  });
});

describe("video request defaults and aliases", () => {
  const spec = (body: unknown) => videoJobSpec(parseBody(videoProcessRequestSchema, body), { projectId: "p-000001", sessionId: "s" });
  it("applies the spec's defaults", () => {
    const s = spec({ inputUri: "file:///a.mp4", features: ["FACE_DETECTION", "MEDIA_RENDERING"] });
    expect(s.features).toEqual(["FACE_DETECTION", "MEDIA_RENDER"]);
    expect(s.process).toEqual({ objectsConfidenceThreshold: 0.3, innerObjectsConfidenceThreshold: 0.15, faceBoxExpansionFactor: 1.5, profileName: "gen6_standard" });
    expect(s.render).toMatchObject({
      redactionStyle: "MOSAIC",
      redactionShape: "RECTANGLE",
      redactionIntensity: "MEDIUM",
      redactionColor: "#9F0500",
      maskAudio: null,
      maskAudioParams: [0.32, -0.24],
      videoQuality: 0.65,
      videoPreset: "ULTRAFAST",
      exportHashes: [],
    });
    expect(s.prepare.hashTypes).toEqual(["sha256"]);
  });
  it("maps the older names onto the current ones", () => {
    const s = spec({
      inputUri: "file:///a.mp4",
      features: ["MEDIA_RENDER", "MEDIA_RENDERING"],
      videoContext: { processConfig: { confidenceThreshold: 0.5, confidenceThresholdSub: 0.25, faceboxExpand: 2 } },
    });
    expect(s.features).toEqual(["MEDIA_RENDER"]);
    expect(s.process).toMatchObject({ objectsConfidenceThreshold: 0.5, innerObjectsConfidenceThreshold: 0.25, faceBoxExpansionFactor: 2 });
  });
  it("reports every problem with its field", () => {
    try {
      parseBody(videoProcessRequestSchema, { inputUri: 3, features: "FACE", extra: true });
      expect.unreachable();
    } catch (e) {
      expect(isObscuraError(e)).toBe(true);
      const fields = (e as { details: { field: string }[] }).details.map((d) => d.field).sort();
      expect(fields).toEqual(["extra", "features", "inputUri"]);
    }
  });
  it("dedupes features in request order", () => {
    expect(normaliseFeatures(["STATE_DROP", "MEDIA_RENDERING", "MEDIA_RENDER", "STATE_DROP"])).toEqual(["STATE_DROP", "MEDIA_RENDER"]);
  });
});

describe("image metadata file name", () => {
  it("sits next to the JPG and keeps a SAS query", () => {
    expect(metadataUriFor("file:///out/image.jpg")).toBe("file:///out/image.json");
    expect(metadataUriFor("s3://b/x/photo.JPEG")).toBe("s3://b/x/photo.json");
    expect(metadataUriFor("file:///out/render")).toBe("file:///out/render.json");
    expect(metadataUriFor("file:///out/v1.2/shot.png")).toBe("file:///out/v1.2/shot.json");
    expect(metadataUriFor("file:///out/.hidden")).toBe("file:///out/.hidden.json");
    expect(metadataUriFor("https://a.blob.core.windows.net/c/i.jpg?sv=1&sig=2")).toBe("https://a.blob.core.windows.net/c/i.json?sv=1&sig=2");
  });
});
