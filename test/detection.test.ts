/**
 * The Detection API's analysis without HTTP (issue 9): pose from landmarks on synthetic heads of
 * known angles, the 468 -> 68 landmark mapping and its named lists, the attribute read-outs, the
 * query, image decoding (EXIF orientation, the 1920x1080 bound) and the real models on face-api's
 * sample photos.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { ageOf, emotionOf, faceAttributes, genderOf, landmarks68 } from "@/server/detection/attributes";
import { DetectionError, decodeImage, detectObjects, detectionErrorResponse, handleDetection, parseQuery } from "@/server/detection/api";
import { resetAuthCache } from "@/server/auth/bearer";
import { resetConfig } from "@/server/config";
import { resetDetectors } from "@/server/vision/engine";
import { LANDMARK_GROUPS, MESH_TO_IBUG68, namedLandmarks, type Point2 } from "@/server/detection/landmarks";
import { MODEL_POINTS, isFrontal, poseFromLandmarks, type Vec3 } from "@/server/detection/pose";
import { useModelDataDir } from "./helpers/models";

useModelDataDir("detection");

const SAMPLE = (n: number) => path.resolve(`node_modules/@vladmandic/face-api/demo/sample${n}.jpg`);

/** The six model points turned by pitch (about x), yaw (about y) and roll (about z), in degrees, projected. */
function head(pitch: number, yaw: number, roll: number): Point2[] {
  const [a, b, c] = [pitch, yaw, roll].map((d) => (d * Math.PI) / 180) as [number, number, number];
  const pts: Point2[] = Array.from({ length: 68 }, () => [0, 0]);
  for (const [i, m] of MODEL_POINTS) {
    let [x, y, z]: Vec3 = m;
    [y, z] = [y * Math.cos(a) - z * Math.sin(a), y * Math.sin(a) + z * Math.cos(a)];
    [x, z] = [x * Math.cos(b) + z * Math.sin(b), -x * Math.sin(b) + z * Math.cos(b)];
    [x, y] = [x * Math.cos(c) - y * Math.sin(c), x * Math.sin(c) + y * Math.cos(c)];
    pts[i] = [640 + x * 0.4, 360 - y * 0.4]; // image y points down
  }
  return pts;
}

/** docs/img/detection-landmarks.jpg: boxes, landmarks and a label per face. */
async function drawDocsPicture(jpeg: Buffer, faces: Awaited<ReturnType<typeof detectObjects>>): Promise<void> {
  const { width, height } = await sharp(jpeg).metadata();
  const parts: string[] = [];
  for (const f of faces) {
    const b = f.boundingBox;
    const a = f.attributes!;
    parts.push(`<rect x="${b.x}" y="${b.y}" width="${b.width}" height="${b.height}" fill="none" stroke="#00e5ff" stroke-width="3"/>`);
    for (const [name, pts] of Object.entries(a.landmarks!)) {
      const colour = name.startsWith("eye") ? "#00ff88" : name.startsWith("mouth") ? "#ff3b6b" : name.startsWith("nose") ? "#ffd400" : "#ffffff";
      for (const [x, y] of pts) parts.push(`<circle cx="${x}" cy="${y}" r="${name.endsWith("Center") ? 5 : 3}" fill="${colour}"/>`);
    }
    const text = `${a.gender} ${a.age} · ${a.emotion} · yaw ${Math.round(a.pose!.yaw)}`;
    parts.push(`<rect x="${b.x}" y="${b.y - 30}" width="${text.length * 11 + 12}" height="28" fill="#007c8a"/><text x="${b.x + 6}" y="${b.y - 9}" font-family="DejaVu Sans" font-size="19" fill="#fff">${text}</text>`);
  }
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${parts.join("")}</svg>`;
  const drawn = await sharp(jpeg).composite([{ input: Buffer.from(svg) }]).png().toBuffer();
  await sharp(drawn).resize(1024).jpeg({ quality: 85 }).toFile(path.resolve("docs/img/detection-landmarks.jpg"));
}

describe("pose", () => {
  it("recovers the angles of synthetic heads, with the documented signs", () => {
    // turned to the image's right: yaw > 0 (the nose moves right of the eyes' middle)
    const right = head(0, 30, 0);
    expect(right[30]![0]).toBeGreaterThan((right[36]![0] + right[45]![0]) / 2);
    expect(poseFromLandmarks(right)).toEqual({ pitch: 0, roll: 0, yaw: 30 });
    // looking up: pitch > 0 (the model turned by a negative angle about x moves the nose up)
    expect(poseFromLandmarks(head(-15, 0, 0))).toEqual({ pitch: 15, roll: 0, yaw: 0 });
    // tilted clockwise in the image (the right eye, on the image's left, goes up): roll > 0
    const cw = head(0, 0, -20);
    expect(cw[36]![1]).toBeLessThan(cw[45]![1]);
    expect(poseFromLandmarks(cw)).toEqual({ pitch: 0, roll: 20, yaw: 0 });
    const mixed = poseFromLandmarks(head(10, -25, 12))!;
    expect(mixed.pitch).toBeCloseTo(-10, 1);
    expect(mixed.yaw).toBeCloseTo(-25, 1);
    expect(mixed.roll).toBeCloseTo(-12, 1);
    expect(isFrontal({ pitch: 5, roll: 40, yaw: -19 })).toBe(true);
    expect(isFrontal({ pitch: 5, roll: 0, yaw: 25 })).toBe(false);
  });
});

describe("landmarks and attribute read-outs", () => {
  it("maps 68 distinct mesh points and splits them into the named lists", () => {
    expect(MESH_TO_IBUG68).toHaveLength(68);
    expect(new Set(MESH_TO_IBUG68).size).toBe(68);
    const named = namedLandmarks(Array.from({ length: 68 }, (_, i) => [i, 2 * i] as Point2));
    const sizes = Object.fromEntries(Object.entries(named).map(([k, v]) => [k, v.length]));
    expect(sizes).toEqual({ faceContour: 17, eyebrowRight: 5, eyebrowLeft: 5, noseBridge: 4, noseBall: 5, eyeRight: 6, eyeLeft: 6, mouthOuter: 12, mouthInner: 8, eyeRightCenter: 1, eyeLeftCenter: 1 });
    expect(named.eyeRightCenter).toEqual([[38.5, 77]]);
    expect(Object.values(LANDMARK_GROUPS).reduce((s, [a, b]) => s + b - a, 0)).toBe(68);
  });

  it("reads age, gender and emotion from the models' outputs", () => {
    const bins = new Float32Array(100);
    bins[30] = 0.5;
    bins[32] = 0.3;
    bins[60] = 0.2;
    expect(ageOf(bins)).toEqual({ age: 37, confidence: 0.3 }); // expected 36.6; only 32 lies within 5 years of 37
    expect(genderOf(0.9)).toEqual({ gender: "male", confidence: 0.9 });
    expect(genderOf(0.2)).toEqual({ gender: "female", confidence: 0.8 });
    expect(emotionOf([0.05, 0, 0.05, 0.6, 0.1, 0.1, 0.1])).toEqual({
      emotion: "happiness",
      emotionConfidence: 0.6,
      emotionsAll: { anger: 0.05, disgust: 0, fear: 0.05, happiness: 0.6, sadness: 0.1, surprise: 0.1, neutral: 0.1 },
    });
  });

  it("parses type and faceOption, naming a bad value", () => {
    const q = (s: string) => parseQuery(new URL("http://x/v1/detections" + s));
    expect(q("")).toEqual({ types: new Set(["face", "person"]), faceOptions: new Set() });
    expect(q("?type=face&faceOption=gender,age")).toEqual({ types: new Set(["face"]), faceOptions: new Set(["gender", "age"]) });
    expect(q("?type=person,face")).toMatchObject({ types: new Set(["person", "face"]) });
    const err = (s: string) => {
      try {
        q(s);
      } catch (e) {
        return e as DetectionError;
      }
      throw new Error("no error");
    };
    expect(err("?type=car")).toMatchObject({ status: 400, reasonCode: 40001, reason: expect.stringMatching(/invalid type value "car"; allowed: all, face, person/) });
    expect(err("?faceOption=gender,smile")).toMatchObject({ status: 400, reasonCode: 40002, reason: expect.stringMatching(/"smile"; allowed: gender, landmark, emotion, pose, age/) });
  });
});

describe("images", () => {
  it("applies the EXIF orientation and scales down into 1920x1080", async () => {
    const upright = await sharp({ create: { width: 400, height: 200, channels: 3, background: "#000" } })
      .composite([{ input: await sharp({ create: { width: 100, height: 50, channels: 3, background: "#f00" } }).png().toBuffer(), left: 0, top: 0 }])
      .jpeg()
      .toBuffer();
    // stored turned 90 degrees with orientation 6 ("rotate 90 clockwise to view")
    const stored = await sharp(upright).rotate(-90).withMetadata({ orientation: 6 }).jpeg().toBuffer();
    expect((await sharp(stored).metadata()).width).toBe(200);
    const d = await decodeImage(stored);
    expect([d.image.width, d.image.height, d.orientation]).toEqual([400, 200, 6]);
    expect(d.image.data[0]).toBeGreaterThan(200); // red in the top-left corner, as upright
    const big = await decodeImage(await sharp({ create: { width: 4000, height: 1000, channels: 3, background: "#888" } }).png().toBuffer());
    expect([big.image.width, big.image.height, big.orientation]).toEqual([1920, 480, 1]);
    const tall = await decodeImage(await sharp({ create: { width: 1000, height: 3000, channels: 3, background: "#888" } }).gif().toBuffer());
    expect([tall.image.width, tall.image.height]).toEqual([360, 1080]);
    await expect(decodeImage(await sharp({ create: { width: 10, height: 10, channels: 3, background: "#888" } }).webp().toBuffer())).rejects.toMatchObject({ status: 415, reasonCode: 41502 });
    await expect(decodeImage(Buffer.from("not an image"))).rejects.toMatchObject({ status: 415, reasonCode: 41502 });
  });
});

describe("real models on face-api's sample photos", () => {
  it("finds the people and faces, analyses every face of 40 px and more, with the models' own confidences", async () => {
    const { image } = await decodeImage(await sharp(SAMPLE(3)).toBuffer());
    const objects = await detectObjects(image, { types: new Set(["face", "person"]), faceOptions: new Set(["gender", "age", "emotion", "pose", "landmark"]) });
    const faces = objects.filter((o) => o.type === "face");
    const people = objects.filter((o) => o.type === "person");
    expect(faces.length).toBe(3); // three women; nothing else passes the face check
    expect(people.length).toBeGreaterThanOrEqual(3);
    for (const f of faces) {
      const a = f.attributes!;
      expect(a.gender).toBe("female");
      expect(a.genderConfidence).toBeGreaterThan(0.5);
      expect(a.age).toBeGreaterThan(15);
      expect(a.age).toBeLessThan(50);
      expect(a.ageConfidence).toBeGreaterThan(0);
      expect(a.ageConfidence).toBeLessThanOrEqual(1);
      expect(Object.keys(a.emotionsAll!).sort()).toEqual(["anger", "disgust", "fear", "happiness", "neutral", "sadness", "surprise"]);
      expect(Object.values(a.emotionsAll!).reduce((s, v) => s + v, 0)).toBeCloseTo(1, 1);
      expect(a.emotionConfidence).toBe(Math.max(...Object.values(a.emotionsAll!)));
      expect(typeof a.frontal).toBe("boolean");
      // landmarks lie on the face: eyes above the nose tip above the mouth, all near the box
      const lm = a.landmarks!;
      const b = f.boundingBox;
      for (const pts of Object.values(lm)) {
        for (const [x, y] of pts) {
          expect(x).toBeGreaterThan(b.x - b.width * 0.3);
          expect(x).toBeLessThan(b.x + b.width * 1.3);
          expect(y).toBeGreaterThan(b.y - b.height * 0.3);
          expect(y).toBeLessThan(b.y + b.height * 1.3);
        }
      }
      expect(lm.eyeRightCenter[0]![1]).toBeLessThan(lm.mouthOuter[3]![1]);
      expect(lm.eyeRightCenter[0]![0]).toBeLessThan(lm.eyeLeftCenter[0]![0]); // the person's right eye on the image's left
    }
    if (process.env.OBSCURA_DOCS_SCREENSHOTS) await drawDocsPicture(await sharp(SAMPLE(3)).resize(image.width, image.height).toBuffer(), faces);
    // the pose follows the landmarks: a face's yaw and the nose's offset from the eyes agree in sign
    for (const f of faces) {
      const lm = f.attributes!.landmarks!;
      const offset = lm.noseBridge[3]![0] - (lm.eyeRightCenter[0]![0] + lm.eyeLeftCenter[0]![0]) / 2;
      if (Math.abs(f.attributes!.pose!.yaw) > 10) expect(Math.sign(offset)).toBe(Math.sign(f.attributes!.pose!.yaw));
    }
  });

  it("leaves faces under 40 px without attributes, and runs FaceMesh on upright crops of tilted faces", async () => {
    const { image } = await decodeImage(await sharp(SAMPLE(1)).toBuffer());
    const tiny = { x: 10, y: 10, width: 30, height: 30 };
    expect(await faceAttributes(image, [tiny], new Set(["gender"]))).toEqual([null]);
    // a face and the same face turned 30 degrees in the image: landmarks turn with it
    const turned = await sharp(SAMPLE(3)).rotate(30, { background: "#000" }).toBuffer();
    const a = (await decodeImage(await sharp(SAMPLE(3)).toBuffer())).image;
    const b = (await decodeImage(turned)).image;
    const fa = (await detectObjects(a, { types: new Set(["face"]), faceOptions: new Set(["pose"]) })).map((o) => o.attributes!.pose!.roll);
    const fb = (await detectObjects(b, { types: new Set(["face"]), faceOptions: new Set(["pose"]) })).map((o) => o.attributes!.pose!.roll);
    expect(fb.length).toBe(fa.length);
    const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
    expect(mean(fb) - mean(fa)).toBeGreaterThan(20); // turned clockwise: roll grows by about 30
    expect(mean(fb) - mean(fa)).toBeLessThan(40);
    expect((await landmarks68(image, [])).length).toBe(0);
  });
});

describe("engine failures", () => {
  it("answers 502 (not ready) when a model cannot be loaded, and 500 for anything unexpected", async () => {
    const saved = { models: process.env.OBSCURA_MODELS_DIR, token: process.env.OBSCURA_API_TOKEN };
    // a well-formed ONNX file onnxruntime cannot run, replacing the person detector
    const v = (n: number): number[] => (n < 128 ? [n] : [(n % 128) | 128, ...v(Math.floor(n / 128))]);
    const bytes = (s: string) => [...Buffer.from(s)];
    const msg = (field: number, body: number[]) => [...v(field * 8 + 2), ...v(body.length), ...body];
    const num = (field: number, n: number) => [...v(field * 8), ...v(n)];
    const info = (name: string, dims: number[]) => [...msg(1, bytes(name)), ...msg(2, msg(1, [...num(1, 1), ...msg(2, dims.flatMap((d) => msg(1, num(1, d))))]))];
    const model = [...num(1, 8), ...msg(7, [...msg(2, bytes("empty")), ...msg(11, info("images", [1, 3, 64, 64])), ...msg(12, info("output0", [1, 6, 10]))])];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "obscura-broken-"));
    fs.writeFileSync(path.join(dir, "broken.onnx"), Buffer.from(model));
    fs.writeFileSync(path.join(dir, "broken.json"), JSON.stringify({ name: "broken", model: "broken.onnx", features: ["PERSON_DETECTION"], mode: "replace", input: { width: 64, height: 64 }, output: { format: "yolov8" }, classes: { "0": "person" } }));
    process.env.OBSCURA_MODELS_DIR = dir;
    process.env.OBSCURA_API_TOKEN = "detection-test-token";
    resetConfig();
    resetAuthCache();
    resetDetectors();
    try {
      const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: "#888" } }).png().toBuffer();
      const res = await handleDetection(
        new Request("http://localhost/v1/detections?type=person", { method: "POST", headers: { "x-access-token": "detection-test-token", "content-type": "application/octet-stream" }, body: new Uint8Array(png) }),
      );
      expect(res.status).toBe(502);
      expect(await res.json()).toMatchObject({ error: "Bad Gateway", reasonCode: 50202, reason: expect.stringMatching(/not ready: custom model manifest broken.json: model: onnxruntime cannot load/) });
    } finally {
      for (const [k, val] of [["OBSCURA_MODELS_DIR", saved.models], ["OBSCURA_API_TOKEN", saved.token]] as const) {
        if (val === undefined) delete process.env[k];
        else process.env[k] = val;
      }
      resetConfig();
      resetAuthCache();
      resetDetectors();
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const internal = detectionErrorResponse(new TypeError("cannot read properties of undefined"));
    expect(internal.status).toBe(500);
    expect(await internal.json()).toEqual({ error: "Internal Server Error", reason: "detection failed on an unexpected condition; see the server log", reasonCode: 50001 });
  });
});
