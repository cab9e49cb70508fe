/**
 * The HTTP contract of /api/v1 over real HTTP against the real server (embedded database):
 * authentication, every validation rule of the spec, status codes and the error body.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, TOKEN, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ OBSCURA_WORKERS: "0" });
});
afterAll(async () => {
  await s?.stop();
});

const video = (extra: Record<string, unknown> = {}) => ({ inputUri: "file:///tmp/in.mp4", features: ["FACE_DETECTION"], ...extra });
const image = (extra: Record<string, unknown> = {}) => ({
  inputUri: "file:///tmp/in.jpg",
  outputUri: "file:///tmp/out.jpg",
  features: ["FACE_DETECTION", "MEDIA_RENDERING"],
  ...extra,
});

async function expect400(path: string, body: unknown, field: string, problem?: RegExp) {
  const r = await s.api("POST", path, body);
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body.error.status).toBe("INVALID_ARGUMENT");
  expect(r.body.error.code).toBe(400);
  const d = r.body.error.details.find((x: { field: string }) => x.field === field);
  expect(d, `no detail for ${field} in ${JSON.stringify(r.body.error.details)}`).toBeTruthy();
  if (problem) expect(d.problem).toMatch(problem);
  return r.body;
}

describe("authentication", () => {
  it("refuses a missing token with 401 and the error body", async () => {
    const r = await fetch(s.url + "/api/v1/videos:process", { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toMatch(/Bearer/);
    const b = await r.json();
    expect(b.error).toMatchObject({ code: 401, status: "UNAUTHENTICATED" });
  });
  it("refuses a wrong token and a malformed header", async () => {
    expect((await s.api("POST", "/api/v1/videos:process", video(), { authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
    expect((await s.api("POST", "/api/v1/videos:process", video(), { authorization: `Basic ${TOKEN}` })).status).toBe(401);
    expect((await s.api("GET", "/api/v1/projects/default/locations/local/operations/x", undefined, { authorization: "Bearer nope" })).status).toBe(401);
  });
  it("accepts the configured token", async () => {
    const r = await s.api("POST", "/api/v1/videos:process", video());
    expect(r.status).toBe(200);
    expect(r.body.name).toMatch(/^projects\/default\/locations\/local\/operations\/[0-9a-f-]{36}$/);
  });
});

describe("request errors", () => {
  it("answers 415 for a non-JSON content type, 400 for broken JSON or an empty body", async () => {
    const r = await s.api("POST", "/api/v1/videos:process", "inputUri=x", { "content-type": "application/x-www-form-urlencoded" });
    expect(r.status).toBe(415);
    const b = await s.api("POST", "/api/v1/videos:process", "{not json");
    expect(b.status).toBe(400);
    expect(b.body.error.message).toMatch(/not valid JSON/);
    expect((await s.api("POST", "/api/v1/videos:process", "")).status).toBe(400);
    expect((await s.api("POST", "/api/v1/videos:process", "[1,2]")).status).toBe(400);
  });
  it("answers 413 past the body limit", async () => {
    const r = await s.api("POST", "/api/v1/videos:process", video({ tag: { big: "x".repeat(1100 * 1024) } }));
    expect(r.status).toBe(413);
    expect(r.body.error.message).toMatch(/at most 1048576 bytes/);
  });
  it("answers 405 with Allow for a wrong method", async () => {
    const r = await s.api("GET", "/api/v1/videos:process");
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("POST");
    expect(r.body.error.status).toBe("METHOD_NOT_ALLOWED");
    const p = await s.api("PUT", "/api/v1/projects/default/locations/local/operations/abc", {});
    expect(p.status).toBe(405);
    expect(p.headers.get("allow")).toBe("GET, DELETE");
  });
  it("answers 404 for unknown operations and unknown resources", async () => {
    const r = await s.api("GET", "/api/v1/projects/default/locations/local/operations/00000000-0000-0000-0000-000000000000");
    expect(r.status).toBe(404);
    expect(r.body.error.status).toBe("NOT_FOUND");
    expect((await s.api("GET", "/api/v1/projects/default/locations/elsewhere/operations/x")).status).toBe(404);
    expect((await s.api("GET", "/api/v1/nothing/here")).status).toBe(404);
    expect((await s.api("DELETE", "/api/v1/projects/default/locations/local/operations/nope")).status).toBe(404);
  });
  it("names every problem at once and refuses unknown fields", async () => {
    const r = await s.api("POST", "/api/v1/videos:process", {
      inputUri: "ftp://x/y.mp4",
      features: ["FACE_DETECTION", "NOPE"],
      projectId: "Bad_Project",
      color: "red",
      videoContext: { renderConfig: { videoQuality: 2, shade: 1 } },
    });
    expect(r.status).toBe(400);
    const fields = r.body.error.details.map((d: { field: string }) => d.field).sort();
    expect(fields).toEqual(["color", "features[1]", "inputUri", "projectId", "videoContext.renderConfig.shade", "videoContext.renderConfig.videoQuality"].sort());
    const q = r.body.error.details.find((d: { field: string }) => d.field === "videoContext.renderConfig.videoQuality");
    expect(q.problem).toMatch(/between 0 and 1.*got 2/);
  });
});

describe("video request rules", () => {
  const P = "/api/v1/videos:process";
  it("requires inputUri and features", async () => {
    await expect400(P, { features: ["FACE_DETECTION"] }, "inputUri", /required/);
    await expect400(P, { inputUri: "file:///a.mp4" }, "features", /required/);
    await expect400(P, { inputUri: "file:///a.mp4", features: [] }, "features", /at least one/);
  });
  it("accepts every video feature and both render spellings", async () => {
    for (const f of ["MEDIA_PREPARE", "PERSON_DETECTION", "HEAD_DETECTION", "FACE_DETECTION", "VEHICLE_DETECTION", "LICENSE_PLATE_DETECTION", "ID_DETECTION", "SCREEN_DETECTION", "DOCUMENT_DETECTION", "SPEECH_TRANSCRIPTION", "MEDIA_RENDERING", "MEDIA_RENDER", "STATE_DROP"]) {
      const r = await s.api("POST", P, video({ features: [f] }));
      expect(r.status, `${f}: ${JSON.stringify(r.body)}`).toBe(200);
    }
  });
  it("checks projectId", async () => {
    for (const bad of ["abc", "a".repeat(37), "Upper-case", "ends-with-", "under_score", 123]) {
      await expect400(P, video({ projectId: bad }), "projectId", /6-36 characters/);
    }
    const ok = await s.api("POST", P, video({ projectId: "my-project-1" }));
    expect(ok.status).toBe(200);
    expect(ok.body.name).toMatch(/^projects\/my-project-1\/locations\/local\/operations\//);
  });
  it("checks thresholds, their aliases and the face box factor", async () => {
    for (const [k, v] of [
      ["objectsConfidenceThreshold", 1.5],
      ["confidenceThreshold", -0.1],
      ["innerObjectsConfidenceThreshold", 2],
      ["confidenceThresholdSub", "0.3"],
      ["faceBoxExpansionFactor", 0.5],
      ["faceboxExpand", 6],
      ["profileName", "gen7_standard"],
    ] as const) {
      await expect400(P, video({ videoContext: { processConfig: { [k]: v } } }), `videoContext.processConfig.${k}`);
    }
    for (const pc of [{ confidenceThreshold: 0.5 }, { confidenceThresholdSub: 0 }, { faceboxExpand: 5 }, { profileName: "gen5_highMotion" }, { objectsConfidenceThreshold: 0.4, confidenceThreshold: 0.4 }]) {
      expect((await s.api("POST", P, video({ videoContext: { processConfig: pc } }))).status).toBe(200);
    }
    await expect400(P, video({ videoContext: { processConfig: { faceBoxExpansionFactor: 2, faceboxExpand: 3 } } }), "videoContext.processConfig.faceboxExpand", /alias/);
  });
  it("checks renderConfig", async () => {
    const bad: Array<[string, unknown, RegExp?]> = [
      ["redactionStyle", "SWIRL", /OUTLINE, FILL, PIXELATE, BLUR, MOSAIC, SMART/],
      ["redactionShape", "TRIANGLE"],
      ["redactionIntensity", "EXTREME"],
      ["redactionColor", "red", /#RRGGBB/],
      ["redactionColor", "#12345"],
      ["maskAudio", "MUTE"],
      ["maskAudioParams", [0.1], /exactly 2/],
      ["maskAudioParams", [0.1, 0.2, 0.3], /exactly 2/],
      ["maskAudioParams", [0.1, 1.5]],
      ["videoQuality", -0.01],
      ["videoPreset", "ultrafast"],
      ["exportHashes", ["crc32"]],
    ];
    for (const [k, v, re] of bad) {
      const field = k === "maskAudioParams" && Array.isArray(v) && v.length === 2 ? "videoContext.renderConfig.maskAudioParams[1]" : `videoContext.renderConfig.${k}`;
      const body = await expect400(P, video({ videoContext: { renderConfig: { [k]: v } } }), field.startsWith("videoContext.renderConfig.exportHashes") ? "videoContext.renderConfig.exportHashes[0]" : field, re);
      expect(body.error.message).toBeTruthy();
    }
    const good = {
      redactionStyle: "BLUR",
      redactionShape: "ELLIPSE",
      redactionIntensity: "HIGH",
      redactionColor: "#00ff00",
      maskAudio: "SCRAMBLE",
      maskAudioParams: [-1, 1],
      videoQuality: 1,
      videoPreset: "VERYSLOW",
      exportHashes: ["md5", "sha512"],
    };
    expect((await s.api("POST", P, video({ videoContext: { renderConfig: good } }))).status).toBe(200);
  });
  it("checks prepareConfig", async () => {
    await expect400(P, video({ videoContext: { prepareConfig: { hashTypes: ["sha256", "crc"] } } }), "videoContext.prepareConfig.hashTypes[1]");
    await expect400(P, video({ videoContext: { prepareConfig: { ignoreCertificateErrors: "yes" } } }), "videoContext.prepareConfig.ignoreCertificateErrors");
    await expect400(P, video({ videoContext: { prepareConfig: { sessionId: "../etc" } } }), "videoContext.prepareConfig.sessionId");
    const ok = await s.api("POST", P, video({ videoContext: { prepareConfig: { sessionId: "s-1", hashTypes: ["md5", "sha1", "sha256", "sha512"], ignoreCertificateErrors: true } } }));
    expect(ok.status).toBe(200);
  });
  it("keeps a sessionId bound to its input", async () => {
    const first = await s.api("POST", P, video({ inputUri: "file:///tmp/one.mp4", videoContext: { prepareConfig: { sessionId: "bound-session" } } }));
    expect(first.status).toBe(200);
  });
  it("checks notifications", async () => {
    await expect400(P, video({ notifications: [{ method: "HTTP_GET", uri: "http://x/", events: ["START"] }] }), "notifications[0].method", /HTTP_POST/);
    await expect400(P, video({ notifications: [{ uri: "ftp://x/", events: ["START"] }] }), "notifications[0].uri");
    await expect400(P, video({ notifications: [{ uri: "http://x/", events: ["BEGIN"] }] }), "notifications[0].events[0]", /START, PROGRESS, COMPLETION/);
    await expect400(P, video({ notifications: [{ uri: "http://x/", events: [] }] }), "notifications[0].events");
    await expect400(P, video({ notifications: [{ uri: "http://x/" }] }), "notifications[0].events");
    await expect400(P, video({ notifications: [{ uri: "http://x/", events: ["START"], secret: 1 }] }), "notifications[0].secret", /unknown field/);
    expect((await s.api("POST", P, video({ notifications: [{ method: "HTTP_POST", uri: "https://hooks.example/x?k=1", events: ["START", "PROGRESS", "COMPLETION"] }] }))).status).toBe(200);
  });
  it("checks tag and acl", async () => {
    await expect400(P, video({ tag: "text" }), "tag", /JSON object/);
    await expect400(P, video({ tag: [1] }), "tag");
    await expect400(P, video({ acl: "alice" }), "acl");
    expect((await s.api("POST", P, video({ tag: { case: 42, nested: { a: [1] } }, acl: ["alice", "bob"] }))).status).toBe(200);
  });
  it("accepts the spec's URI forms and refuses others", async () => {
    for (const inputUri of [
      "https://example.com/v.mp4",
      "http://example.com/v.mp4",
      "file:///data/v.mp4",
      "file:///C:/videos/v.mp4",
      "s3://bucket/path/v.mp4",
      "https://acct.blob.core.windows.net/c/v.mp4?sv=2021-08-06&se=2030-01-01&sig=abc",
      "s3://bucket/state/",
    ]) {
      const r = await s.api("POST", P, video({ inputUri }));
      expect(r.status, `${inputUri}: ${JSON.stringify(r.body)}`).toBe(200);
    }
    for (const inputUri of ["ftp://x/v.mp4", "relative/v.mp4", "/abs/v.mp4", "", "s3://"]) {
      await expect400(P, video({ inputUri }), "inputUri");
    }
    for (const outputUri of ["file:///out/", "file:///out/x.mp4", "file:///D:/out/", "s3://b/o/", "https://a.blob.core.windows.net/c/o.mp4?sv=1&sig=2"]) {
      expect((await s.api("POST", P, video({ outputUri }))).status, outputUri).toBe(200);
    }
    await expect400(P, video({ outputUri: "https://example.com/out.mp4" }), "outputUri", /SAS/);
  });
  it("never echoes a SAS signature", async () => {
    const r = await s.api("POST", P, video({ inputUri: "https://acct.blob.core.windows.net/c/v.mp4?sv=2021&sig=TOPSECRET", features: ["NOPE"] }));
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).not.toContain("TOPSECRET");
    const ok = await s.api("POST", P, video({ inputUri: "https://acct.blob.core.windows.net/c/v.mp4?sv=2021&sig=TOPSECRET" }));
    const op = await s.api("GET", `/api/v1/${ok.body.name}`);
    expect(op.status).toBe(200);
    expect(JSON.stringify(op.body)).not.toContain("TOPSECRET");
    expect(op.body.metadata.progress.inputUri).toContain("sig=REDACTED");
  });
});

describe("image request rules", () => {
  const P = "/api/v1/images:process";
  it("requires outputUri", async () => {
    await expect400(P, { inputUri: "file:///a.jpg", features: ["FACE_DETECTION"] }, "outputUri", /required/);
  });
  it("accepts image features and refuses video-only ones", async () => {
    for (const f of ["PERSON_DETECTION", "HEAD_DETECTION", "FACE_DETECTION", "VEHICLE_DETECTION", "LICENSE_PLATE_DETECTION", "ID_DETECTION", "SCREEN_DETECTION", "DOCUMENT_DETECTION", "MEDIA_RENDERING"]) {
      expect((await s.api("POST", P, image({ features: [f] }))).status, f).toBe(200);
    }
    for (const f of ["MEDIA_PREPARE", "STATE_DROP", "SPEECH_TRANSCRIPTION"]) await expect400(P, image({ features: [f] }), "features[0]");
  });
  it("checks imageContext", async () => {
    await expect400(P, image({ imageContext: { renderConfig: { imageQuality: 1.2 } } }), "imageContext.renderConfig.imageQuality");
    await expect400(P, image({ imageContext: { renderConfig: { exportMetadata: "yes" } } }), "imageContext.renderConfig.exportMetadata");
    await expect400(P, image({ imageContext: { renderConfig: { videoQuality: 0.5 } } }), "imageContext.renderConfig.videoQuality", /unknown/);
    await expect400(P, image({ videoContext: {} }), "videoContext", /unknown/);
    expect((await s.api("POST", P, image({ imageContext: { renderConfig: { imageQuality: 0, exportMetadata: true } } }))).status).toBe(200);
  });
  it("refuses a folder as input", async () => {
    await expect400(P, image({ inputUri: "file:///images/" }), "inputUri", /single image/);
  });
});

describe("OpenAPI", () => {
  it("serves a 3.1 document generated from the schemas, and a reference page", async () => {
    const r = await fetch(s.url + "/openapi.json");
    expect(r.status).toBe(200);
    const doc = await r.json();
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/api/v1/videos:process", "/api/v1/images:process", "/api/v1/projects/{projectId}/locations/{locationId}/operations/{operationId}", "/v11/images:annotate", "/v2/vehicle/{group}", "/v1/detections"]),
    );
    expect(doc.components.securitySchemes.apiKey).toEqual({ type: "apiKey", in: "header", name: "X-API-Key" });
    expect(doc.components.schemas.AnnotateRequest.required).toEqual(["requests"]);
    const v = doc.components.schemas.VideoProcessRequest;
    expect(v.required).toEqual(expect.arrayContaining(["inputUri", "features"]));
    expect(v.additionalProperties).toBe(false);
    expect(doc.components.schemas.RenderConfig.properties.videoPreset.enum).toContain("VERYSLOW");
    const page = await fetch(s.url + "/docs/api");
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("/openapi.json");
    const js = await fetch(s.url + "/docs/api/redoc.standalone.js");
    expect(js.status).toBe(200);
    expect((await js.text()).length).toBeGreaterThan(100_000);
  });
});
