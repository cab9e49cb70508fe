/**
 * Speech transcription against real parts: espeak-ng speech, ffmpeg-made silences, hum and video,
 * the built-in Moonshine model, and sherpa-onnx-node running the same Moonshine files laid out as
 * a sherpa "moonshine-v2" model folder (tokens.txt written from the Llama tokenizer's vocabulary).
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isObscuraError } from "@/lib/errors";
import { runFfmpeg } from "@/server/media/ffmpeg";
import {
  detectSherpaModel,
  extractAudio,
  probeAudio,
  segmentSamples,
  Segmenter,
  speechConfigFromEnv,
  speechEngineFor,
  toWebVTT,
  transcribeMedia,
  vttTime,
  type SpeechConfig,
  type Transcript,
} from "@/server/speech";
import { moonshineModelDir } from "@/server/speech/moonshine";
import { wordsFromTokens } from "@/server/speech/sherpa";
import { makeTestVideo } from "./helpers/fixtures";

const run = promisify(execFile);
/** Five sentences, each in another espeak voice and speed. */
const SENTENCES = [
  "The quick brown fox jumps over the lazy dog.",
  "Please send the report to the office before noon.",
  "We will meet again next Tuesday at the train station.",
  "The weather today is cold and windy with a chance of rain.",
  "She bought three apples and a loaf of bread at the market.",
];
const VOICES: Array<[string, number]> = [["en-us", 150], ["en", 160], ["en-us+f3", 140], ["en-us+m3", 175], ["en-us", 150]];
/** A 45 s run of speech without sentence pauses (commas and "and" only). */
const LONG_TEXT = Array.from({ length: 4 }, () =>
  "the committee reviewed the annual budget and decided that the new library would open in the spring while the old building on the corner of the main street would become a community centre with rooms for music lessons and a small cafe run by volunteers",
).join(" and ");
/** Word error rate bounds, measured on these fixtures (see docs/speech.md) with some margin. */
const MAX_WER_BUILTIN = 0.25;
const MAX_WER_SHERPA = 0.25;

const BUILTIN: SpeechConfig = { modelDir: null, modelLanguages: null, builtin: true };

let dir: string;
const f = (name: string) => path.join(dir, name);

async function samplesOf(file: string): Promise<Float32Array> {
  const chunks: Float32Array[] = [];
  for await (const c of extractAudio(file)) chunks.push(c);
  const out = new Float32Array(chunks.reduce((n, c) => n + c.length, 0));
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

/** Speech runs by a plain amplitude test (|x| > 0.01, gaps over 0.5 s split): the truth. */
function truthRuns(samples: Float32Array, rate = 16000): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  let start = -1;
  let last = -Infinity;
  for (let i = 0; i < samples.length; i++) {
    if (Math.abs(samples[i]) <= 0.01) continue;
    if (start < 0 || i - last > rate / 2) {
      if (start >= 0) runs.push([start / rate, last / rate]);
      start = i;
    }
    last = i;
  }
  if (start >= 0) runs.push([start / rate, last / rate]);
  return runs;
}

function words(text: string): string[] {
  return text.toLowerCase().replace(/[^a-z0-9' ]+/g, " ").split(/\s+/).filter(Boolean);
}

/** Word error rate: word-level Levenshtein distance / reference length. */
function wer(reference: string, hypothesis: string): number {
  const r = words(reference);
  const h = words(hypothesis);
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j);
  for (let i = 1; i <= r.length; i++) {
    const cur = [i];
    for (let j = 1; j <= h.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r[i - 1] === h[j - 1] ? 0 : 1));
    prev = cur;
  }
  return r.length ? prev[h.length] / r.length : 0;
}

async function ffmpeg(args: string[]) {
  await runFfmpeg(args);
}

/** A sherpa-onnx "moonshine-v2" folder made of the npm package's Moonshine Tiny files. */
async function makeSherpaMoonshineDir(target: string): Promise<void> {
  await mkdir(target, { recursive: true });
  const src = moonshineModelDir();
  await symlink(path.join(src, "encoder_model.onnx"), path.join(target, "encoder_model.onnx"));
  await symlink(path.join(src, "decoder_model_merged.onnx"), path.join(target, "decoder_model_merged.onnx"));
  // sherpa's Moonshine v2 tokens.txt: base64 of each token's bytes, then its id.
  const { default: tok } = await import("llama-tokenizer-js");
  const lines = tok.vocabById.map((t, id) => {
    const byte = /^<0x([0-9A-F]{2})>$/.exec(t);
    const bytes = byte ? Buffer.from([parseInt(byte[1], 16)]) : Buffer.from(t.replace(/\u2581/g, " "), "utf8");
    return `${bytes.toString("base64")} ${id}`;
  });
  for (let id = lines.length; id < 32768; id++) lines.push(`${Buffer.from(`<extra_${id}>`).toString("base64")} ${id}`);
  await writeFile(path.join(target, "tokens.txt"), lines.join("\n") + "\n");
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "obscura-speech-"));
  await Promise.all([
    ...SENTENCES.map((s, i) => run("espeak-ng", ["-v", VOICES[i][0], "-s", String(VOICES[i][1]), "-w", f(`s${i}.wav`), s])),
    run("espeak-ng", ["-v", "en-us", "-s", "170", "-w", f("long.wav"), LONG_TEXT]),
  ]);
  // s0 | 1 s silence | s1 | 1 s silence | ... | s4, at 16 kHz
  const gap = ["-f", "lavfi", "-t", "1", "-i", "anullsrc=r=22050:cl=mono"];
  const inputs = SENTENCES.flatMap((_, i) => [...(i ? gap : []), "-i", f(`s${i}.wav`)]);
  const n = SENTENCES.length * 2 - 1;
  const concat = Array.from({ length: n }, (_, i) => `[${i}]`).join("") + `concat=n=${n}:v=0:a=1`;
  await ffmpeg([...inputs, "-filter_complex", concat, "-ar", "16000", f("speech.wav")]);
  await Promise.all([
    // The same speech in a video: 48 kHz stereo AAC in MP4.
    ffmpeg([
      "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10:duration=25",
      "-i", f("speech.wav"),
      "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
      "-c:a", "aac", "-b:a", "128k", "-ar", "48000", "-ac", "2", "-shortest", f("speech.mp4"),
    ]),
    // Loud mains hum (60 + 180 Hz) and pink noise under the speech.
    ffmpeg([
      "-i", f("speech.wav"),
      "-f", "lavfi", "-i", "sine=f=60:r=16000:d=25,volume=0.5",
      "-f", "lavfi", "-i", "sine=f=180:r=16000:d=25,volume=0.15",
      "-f", "lavfi", "-i", "anoisesrc=r=16000:d=25:a=0.01:c=pink",
      "-filter_complex", "[0][1][2][3]amix=inputs=4:duration=first,volume=4", f("hum.wav"),
    ]),
    ffmpeg(["-i", f("speech.wav"), "-af", "volume=-35dB", f("quiet.wav")]),
    ffmpeg(["-i", f("long.wav"), "-ar", "16000", f("long16.wav")]),
    makeTestVideo(f("silent.mp4"), { seconds: 2, audio: false }),
  ]);
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("extraction", () => {
  it("decodes 48 kHz stereo AAC in MP4 to 16 kHz mono samples of the same length", async () => {
    const info = await probeAudio(f("speech.mp4"));
    expect(info.hasAudio).toBe(true);
    const wav = await samplesOf(f("speech.wav"));
    const mp4 = await samplesOf(f("speech.mp4"));
    expect(Math.abs(mp4.length - wav.length) / 16000).toBeLessThan(0.05);
    expect(Math.abs(info.durationSeconds! - wav.length / 16000)).toBeLessThan(0.1);
    let peak = 0;
    for (const x of mp4) peak = Math.max(peak, Math.abs(x));
    expect(peak).toBeGreaterThan(0.1);
    expect(peak).toBeLessThanOrEqual(1.01);
  });

  it("gives an empty transcript for a video without audio", async () => {
    expect((await probeAudio(f("silent.mp4"))).hasAudio).toBe(false);
    const progress: number[] = [];
    const t = await transcribeMedia(f("silent.mp4"), { config: BUILTIN, onProgress: (x) => progress.push(x) });
    expect(t.segments).toEqual([]);
    expect(t.durationSeconds).toBeCloseTo(2, 0);
    expect(t.engine).toBe("moonshine-tiny-en");
    expect(progress.at(-1)).toBe(1);
    expect(toWebVTT(t)).toBe("WEBVTT\n");
  });

  it("names an unreadable input", async () => {
    await writeFile(f("junk.mp4"), "not media");
    const e = await transcribeMedia(f("junk.mp4"), { config: BUILTIN }).catch((x: unknown) => x);
    expect(isObscuraError(e) && e.status).toBe("INVALID_ARGUMENT");
  });
});

describe("segmentation", () => {
  it("finds five sentences separated by 1 s silences, within 0.2 s of the truth", async () => {
    for (const name of ["speech.wav", "quiet.wav"]) {
      const samples = await samplesOf(f(name));
      const truth = truthRuns(await samplesOf(f("speech.wav")));
      expect(truth).toHaveLength(SENTENCES.length);
      const segs = segmentSamples(samples);
      expect(segs.map((s) => [s.start, s.end])).toHaveLength(SENTENCES.length);
      const worst = Math.max(...segs.flatMap((s, i) => [Math.abs(s.start - truth[i][0]), Math.abs(s.end - truth[i][1])]));
      console.log(`${name}: boundaries within ${worst.toFixed(3)} s of the truth`);
      segs.forEach((s, i) => {
        expect(Math.abs(s.start - truth[i][0]), `${name} segment ${i} start`).toBeLessThan(0.2);
        expect(Math.abs(s.end - truth[i][1]), `${name} segment ${i} end`).toBeLessThan(0.2);
        expect(s.audioStart).toBeLessThanOrEqual(s.start);
        expect(s.samples.length / 16000).toBeGreaterThanOrEqual(s.end - s.start);
      });
    }
  });

  it("does not let background hum and noise join everything into one segment", async () => {
    const truth = truthRuns(await samplesOf(f("speech.wav")));
    const segs = segmentSamples(await samplesOf(f("hum.wav")));
    expect(segs).toHaveLength(SENTENCES.length);
    const worst = Math.max(...segs.flatMap((s, i) => [Math.abs(s.start - truth[i][0]), Math.abs(s.end - truth[i][1])]));
    console.log(`hum.wav: boundaries within ${worst.toFixed(3)} s of the truth`);
    segs.forEach((s, i) => expect(Math.abs(s.start - truth[i][0])).toBeLessThan(0.25));
  });

  it("treats a steady tone as background", () => {
    const tone = Float32Array.from({ length: 16000 * 10 }, (_, i) => 0.3 * Math.sin((2 * Math.PI * 440 * i) / 16000));
    expect(segmentSamples(tone)).toEqual([]);
  });

  it("cuts a 45 s run of speech into pieces no longer than the maximum", async () => {
    const samples = await samplesOf(f("long16.wav"));
    expect(samples.length / 16000).toBeGreaterThan(40);
    const segs = segmentSamples(samples, { maxSegmentSeconds: 20 });
    expect(segs.length).toBeGreaterThanOrEqual(3);
    for (const s of segs) expect(s.end - s.start).toBeLessThanOrEqual(20);
    // Pieces follow each other and cover the speech.
    for (let i = 1; i < segs.length; i++) expect(segs[i].start).toBeGreaterThanOrEqual(segs[i - 1].end);
    const covered = segs.reduce((n, s) => n + s.end - s.start, 0);
    expect(covered / (samples.length / 16000)).toBeGreaterThan(0.9);
  });

  it("streams: pushing small chunks gives the same segments as one push, keeping memory bounded", async () => {
    const samples = await samplesOf(f("speech.wav"));
    const whole = segmentSamples(samples);
    const s = new Segmenter();
    const streamed = [];
    let settled = 0;
    for (let i = 0; i < samples.length; i += 1234) {
      streamed.push(...s.push(samples.subarray(i, i + 1234)));
      expect(s.settledSeconds).toBeGreaterThanOrEqual(settled);
      settled = s.settledSeconds;
    }
    streamed.push(...s.finish());
    expect(streamed.map((x) => [x.start, x.end, x.samples.length])).toEqual(whole.map((x) => [x.start, x.end, x.samples.length]));
  });
});

describe("transcription with the built-in model", () => {
  let transcript: Transcript;
  const progress: number[] = [];

  beforeAll(async () => {
    transcript = await transcribeMedia(f("speech.mp4"), { languageCode: "en-US", config: BUILTIN, onProgress: (x) => progress.push(x) });
  }, 120_000);

  it("transcribes espeak sentences with a low word error rate and sensible times", async () => {
    const t = transcript;
    const text = t.segments.map((s) => s.text).join(" ");
    const rate = wer(SENTENCES.join(" "), text);
    const rtf = t.stats.audioSeconds / t.stats.processingSeconds;
    console.log(`built-in moonshine: WER ${rate.toFixed(3)}, ${rtf.toFixed(1)}x real time: ${JSON.stringify(text)}`);
    expect(t.schema).toBe("obscura.transcript/v1");
    expect(t.engine).toBe("moonshine-tiny-en");
    expect(t.languageCode).toBe("en-US");
    expect(rate).toBeLessThanOrEqual(MAX_WER_BUILTIN);
    expect(t.segments).toHaveLength(SENTENCES.length);
    const truth = truthRuns(await samplesOf(f("speech.wav")));
    t.segments.forEach((s, i) => {
      expect(s.id).toBe(i + 1);
      expect(Math.abs(s.start - truth[i][0])).toBeLessThan(0.25);
      expect(Math.abs(s.end - truth[i][1])).toBeLessThan(0.25);
      expect(s.start).toBe(Math.round(s.start * 1000) / 1000);
      expect(s.words).toBeUndefined(); // Moonshine gives no token times: none are invented
    });
    expect(t.stats.audioSeconds).toBeCloseTo(t.durationSeconds, 0);
    const truthSpeech = truth.reduce((n, [a, b]) => n + b - a, 0);
    expect(Math.abs(t.stats.speechSeconds - truthSpeech)).toBeLessThan(0.2 * SENTENCES.length);
    expect(rtf).toBeGreaterThan(2);
  });

  it("reports progress as a growing fraction of audio time, ending at 1", () => {
    expect(progress.length).toBeGreaterThan(3);
    for (let i = 1; i < progress.length; i++) expect(progress[i]).toBeGreaterThan(progress[i - 1]);
    expect(progress.at(-1)).toBe(1);
  });

  it("boosts quiet recordings", async () => {
    const t = await transcribeMedia(f("quiet.wav"), { config: BUILTIN });
    const rate = wer(SENTENCES.join(" "), t.segments.map((s) => s.text).join(" "));
    console.log(`built-in moonshine, 35 dB quieter: WER ${rate.toFixed(3)}`);
    expect(rate).toBeLessThanOrEqual(MAX_WER_BUILTIN);
  });

  it("stops on abort", async () => {
    const ac = new AbortController();
    const p = transcribeMedia(f("long16.wav"), { config: BUILTIN, signal: ac.signal, onProgress: () => ac.abort() });
    const e = await p.catch((x: unknown) => x);
    expect(isObscuraError(e) && e.status).toBe("CANCELLED");
  });

  it("exports valid WebVTT", () => {
    const vtt = toWebVTT(transcript);
    expect(vtt.startsWith("WEBVTT\n\n")).toBe(true);
    expect(vtt.match(/^\d{2}:\d{2}:\d{2}\.\d{3} --> \d{2}:\d{2}:\d{2}\.\d{3}$/gm)).toHaveLength(SENTENCES.length);
  });
});

describe("engine choice", () => {
  it("serves English with the built-in model and refuses other languages without a model", () => {
    for (const code of ["en-US", "en", "en-GB", "EN-us"]) {
      const c = speechEngineFor(code, BUILTIN);
      expect(c.ok && c.engine.name).toBe("moonshine-tiny-en");
    }
    const de = speechEngineFor("de-DE", BUILTIN);
    expect(de.ok).toBe(false);
    if (!de.ok) {
      expect(de.reason).toContain('"de-DE"');
      expect(de.reason).toContain("OBSCURA_SPEECH_MODEL_DIR");
      expect(de.reason).toContain("OBSCURA_SPEECH_MODEL_LANGUAGES");
      expect(de.reason).toContain("docs/speech.md");
    }
    const bad = speechEngineFor("english please", BUILTIN);
    expect(!bad.ok && bad.reason).toContain("BCP-47");
  });

  it("refuses English too when the built-in model is turned off", () => {
    const c = speechEngineFor("en-US", speechConfigFromEnv({ OBSCURA_SPEECH_BUILTIN: "0" }));
    expect(c.ok).toBe(false);
    if (!c.ok) expect(c.reason).toContain("OBSCURA_SPEECH_BUILTIN=0");
  });

  it("reads the environment", () => {
    expect(speechConfigFromEnv({})).toEqual({ modelDir: null, modelLanguages: null, builtin: true });
    expect(speechConfigFromEnv({ OBSCURA_SPEECH_MODEL_DIR: "/m", OBSCURA_SPEECH_MODEL_LANGUAGES: "de-DE, fr", OBSCURA_SPEECH_BUILTIN: "false" })).toEqual({
      modelDir: "/m",
      modelLanguages: ["de", "fr"],
      builtin: false,
    });
  });

  it("refuses a model folder it does not recognise, naming the folder and what was expected", async () => {
    const junk = f("junk-model");
    await mkdir(junk, { recursive: true });
    await writeFile(path.join(junk, "weights.onnx"), "");
    await writeFile(path.join(junk, "README.md"), "");
    for (const config of [{ ...BUILTIN, modelDir: junk }, { ...BUILTIN, modelDir: f("no-such-dir") }]) {
      const c = speechEngineFor("de-DE", config);
      expect(c.ok).toBe(false);
      if (!c.ok) {
        expect(c.reason).toContain(`OBSCURA_SPEECH_MODEL_DIR=${path.basename(config.modelDir)}`);
        expect(c.reason).not.toContain(dir); // no server paths in answers
        expect(c.reason).toMatch(/Whisper.*tokens\.txt/);
      }
    }
    const e = (() => {
      try {
        detectSherpaModel(junk);
      } catch (x) {
        return x;
      }
    })();
    expect(isObscuraError(e) && e.status).toBe("FAILED_PRECONDITION");
    expect((e as Error).message).toContain(junk);
    expect((e as Error).message).toContain("weights.onnx");
  });

  it("recognises the sherpa-onnx layouts and prefers int8 files", async () => {
    const layouts: Record<string, string[]> = {
      whisper: ["tiny-encoder.onnx", "tiny-encoder.int8.onnx", "tiny-decoder.onnx", "tiny-decoder.int8.onnx", "tiny-tokens.txt"],
      "whisper-en": ["tiny.en-encoder.int8.onnx", "tiny.en-decoder.int8.onnx", "tiny.en-tokens.txt"],
      "sense-voice": ["model.onnx", "model.int8.onnx", "tokens.txt"],
      transducer: ["encoder-epoch-99-avg-1.onnx", "encoder-epoch-99-avg-1.int8.onnx", "decoder-epoch-99-avg-1.onnx", "joiner-epoch-99-avg-1.int8.onnx", "tokens.txt"],
      moonshine: ["preprocess.onnx", "encode.int8.onnx", "uncached_decode.int8.onnx", "cached_decode.int8.onnx", "tokens.txt"],
      "moonshine-v2": ["encoder_model.ort", "decoder_model_merged.ort", "tokens.txt"],
    };
    for (const [name, files] of Object.entries(layouts)) {
      const d = f(`layout-${name}`);
      await mkdir(d, { recursive: true });
      await Promise.all(files.map((file) => writeFile(path.join(d, file), "")));
      const m = detectSherpaModel(d);
      expect(m.layout).toBe(name.replace("-en", ""));
      for (const file of Object.values(m.files)) if (files.some((x) => x.includes("int8"))) expect(file).toMatch(/int8|preprocess|decoder-epoch/);
    }
    const whisper = { ...BUILTIN, modelDir: f("layout-whisper") };
    const de = speechEngineFor("de-DE", whisper);
    expect(de.ok && de.engine.name).toBe("sherpa-onnx:whisper");
    expect(speechEngineFor("en-US", whisper).ok && "served").toBe("served");
    expect(speechEngineFor("nb-NO", whisper).ok).toBe(true);
    expect(speechEngineFor("qu-PE", whisper).ok).toBe(false); // not a Whisper language
    expect(speechEngineFor("qu-PE", { ...whisper, modelLanguages: ["*"] }).ok).toBe(true); // the operator says so
    const whisperEn = { ...BUILTIN, modelDir: f("layout-whisper-en") };
    expect(speechEngineFor("de-DE", whisperEn).ok).toBe(false);
    const sense = { ...BUILTIN, modelDir: f("layout-sense-voice") };
    expect(speechEngineFor("ja-JP", sense).ok).toBe(true);
    // Languages named by the operator win; English then falls back to the built-in model.
    const transducerDe = { ...BUILTIN, modelDir: f("layout-transducer"), modelLanguages: ["de"] };
    expect(speechEngineFor("de-AT", transducerDe).ok).toBe(true);
    const en = speechEngineFor("en-US", transducerDe);
    expect(en.ok && en.engine.name).toBe("moonshine-tiny-en");
    const fr = speechEngineFor("fr-FR", transducerDe);
    expect(!fr.ok && fr.reason).toContain("serves de, not fr");
  });

  it("rejects a transcription in a language nobody serves before decoding anything", async () => {
    const e = await transcribeMedia(f("speech.mp4"), { languageCode: "de-DE", config: BUILTIN }).catch((x: unknown) => x);
    expect(isObscuraError(e) && e.status).toBe("FAILED_PRECONDITION");
    expect((e as Error).message).toContain("OBSCURA_SPEECH_MODEL_DIR");
  });
});

describe("sherpa-onnx engine", () => {
  it("transcribes with a sherpa-onnx model folder (Moonshine v2 layout)", async () => {
    const modelDir = f("sherpa-moonshine");
    await makeSherpaMoonshineDir(modelDir);
    const t = await transcribeMedia(f("speech.mp4"), { config: { modelDir, modelLanguages: null, builtin: false } });
    const text = t.segments.map((s) => s.text).join(" ");
    const rate = wer(SENTENCES.join(" "), text);
    console.log(`sherpa-onnx moonshine-v2: WER ${rate.toFixed(3)}, ${(t.stats.audioSeconds / t.stats.processingSeconds).toFixed(1)}x real time: ${JSON.stringify(text)}`);
    expect(t.engine).toBe("sherpa-onnx:moonshine-v2");
    expect(t.segments).toHaveLength(SENTENCES.length);
    expect(rate).toBeLessThanOrEqual(MAX_WER_SHERPA);
  });

  it("turns token times into words without inventing any", () => {
    const result = { tokens: ["\u2581HE", "LLO", "\u2581WORLD", "\u2581"], timestamps: [0.2, 0.4, 0.72, 1.1] };
    expect(wordsFromTokens(result, 1.5)).toEqual([
      { start: 0.2, end: 0.72, word: "HELLO" },
      { start: 0.72, end: 1.1, word: "WORLD" },
    ]);
    expect(wordsFromTokens({ tokens: ["\u4f60", "\u597d"], timestamps: [0.1, 0.3] }, 0.6)).toEqual([
      { start: 0.1, end: 0.3, word: "\u4f60" },
      { start: 0.3, end: 0.6, word: "\u597d" },
    ]);
    expect(wordsFromTokens({ text: "hello", tokens: ["hello"], timestamps: [] }, 1)).toEqual([]);
  });

  const operatorDir = process.env.OBSCURA_SPEECH_MODEL_DIR;
  it.skipIf(!operatorDir)("transcribes with the operator's model (OBSCURA_SPEECH_MODEL_DIR)", async () => {
    const config = { ...speechConfigFromEnv(), builtin: false };
    const choice = speechEngineFor("en-US", config);
    if (!choice.ok) throw new Error(choice.reason);
    const t = await transcribeMedia(f("speech.mp4"), { languageCode: "en-US", config });
    const text = t.segments.map((s) => s.text).join(" ");
    const rate = wer(SENTENCES.join(" "), text);
    console.log(`${t.engine} (${operatorDir}): WER ${rate.toFixed(3)}, ${(t.stats.audioSeconds / t.stats.processingSeconds).toFixed(1)}x real time: ${JSON.stringify(text)}`);
    expect(t.segments.length).toBeGreaterThan(0);
    expect(rate).toBeLessThanOrEqual(0.5);
    for (const s of t.segments) for (const w of s.words ?? []) expect(w.start >= s.start - 0.5 && w.end <= s.end + 0.5 && w.start <= w.end).toBe(true);
  });
});

describe("WebVTT", () => {
  const transcript = (segments: Transcript["segments"]): Transcript => ({
    schema: "obscura.transcript/v1",
    languageCode: "en-US",
    engine: "moonshine-tiny-en",
    durationSeconds: 4000,
    segments,
    stats: { audioSeconds: 4000, speechSeconds: 0, processingSeconds: 0 },
  });
  const TIMING = /^(\d{2}:\d{2}:\d{2}\.\d{3}) --> (\d{2}:\d{2}:\d{2}\.\d{3})$/;
  const seconds = (t: string) => t.split(":").reduce((acc, p) => acc * 60 + Number(p), 0);

  it("writes a header, numbered cues and escapes & < >", () => {
    const vtt = toWebVTT(transcript([{ id: 1, start: 3723.5, end: 3725.25, text: "Tom & Jerry <b>said</b> --> hi" }]));
    expect(vtt).toBe("WEBVTT\n\n1\n01:02:03.500 --> 01:02:05.250\nTom &amp; Jerry &lt;b&gt;said&lt;/b&gt; --&gt; hi\n");
  });

  it("splits long segments into cues of at most 2 lines of 42 characters, sharing the time by text length", () => {
    const text = "This is a rather long segment of speech that certainly does not fit on two lines of forty two characters each, so it has to be split into several cues that follow each other in time.";
    const vtt = toWebVTT(transcript([{ id: 1, start: 10, end: 22, text }]));
    const blocks = vtt.trimEnd().split("\n\n");
    expect(blocks[0]).toBe("WEBVTT");
    const cues = blocks.slice(1).map((b) => {
      const [id, timing, ...lines] = b.split("\n");
      const m = TIMING.exec(timing);
      expect(m, timing).not.toBeNull();
      return { id, start: seconds(m![1]), end: seconds(m![2]), lines };
    });
    expect(cues.length).toBeGreaterThanOrEqual(3);
    expect(cues.map((c) => c.id)).toEqual(cues.map((_, i) => String(i + 1)));
    expect(cues[0].start).toBe(10);
    expect(cues.at(-1)!.end).toBe(22);
    for (let i = 0; i < cues.length; i++) {
      expect(cues[i].lines.length).toBeLessThanOrEqual(2);
      for (const l of cues[i].lines) expect(l.length).toBeLessThanOrEqual(42);
      expect(cues[i].end).toBeGreaterThan(cues[i].start);
      if (i) expect(cues[i].start).toBe(cues[i - 1].end);
      const share = (cues[i].end - cues[i].start) / 12;
      expect(share).toBeCloseTo((cues[i].lines.join(" ").length + 1) / (text.length + cues.length), 2);
    }
    expect(cues.flatMap((c) => c.lines).join(" ")).toBe(text);
  });

  it("gives only the header for an empty transcript", () => {
    expect(toWebVTT(transcript([]))).toBe("WEBVTT\n");
  });

  it("formats times as HH:MM:SS.mmm", () => {
    expect(vttTime(0)).toBe("00:00:00.000");
    expect(vttTime(59.9996)).toBe("00:01:00.000");
    expect(vttTime(36000.123)).toBe("10:00:00.123");
  });
});
