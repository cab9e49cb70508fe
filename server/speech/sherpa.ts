/**
 * Operator-installed models (see layout.ts) run with sherpa-onnx-node's OfflineRecognizer, loaded
 * on first use and cached per folder and language (Whisper and SenseVoice take the language when
 * the recogniser is created). Decoding runs off the main thread (decodeAsync).
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import { ObscuraError } from "@/lib/errors";
import { log } from "../log";
import { onnxThreads } from "../vision/onnx";
import type { RecognizedText, SpeechEngine, TranscriptWord } from "./engine";
import { SPEECH_SAMPLE_RATE } from "./extract";
import { SENSE_VOICE_LANGUAGES, whisperLanguage, type SherpaLayout, type SherpaModel } from "./layout";

/** The native module's surface used here (it ships no TypeScript types). */
interface SherpaModule {
  OfflineRecognizer: { createAsync(config: unknown): Promise<SherpaRecognizer> };
}
interface SherpaRecognizer {
  createStream(): { acceptWaveform(w: { samples: Float32Array; sampleRate: number }): void };
  decodeAsync(stream: unknown): Promise<SherpaResult>;
}
interface SherpaResult {
  text?: string;
  tokens?: string[];
  timestamps?: number[];
  durations?: number[];
}

const recognizers = new Map<string, Promise<SherpaEngine>>();

/** The engine for a detected model and a language (primary subtag, e.g. "de"), loaded once. */
export function loadSherpa(model: SherpaModel, language: string): Promise<SherpaEngine> {
  const key = `${model.dir}\0${model.layout}\0${language}`;
  let engine = recognizers.get(key);
  if (!engine) {
    engine = create(model, language).catch((e) => {
      recognizers.delete(key);
      throw e;
    });
    recognizers.set(key, engine);
  }
  return engine;
}

async function create(model: SherpaModel, language: string): Promise<SherpaEngine> {
  for (const file of [...Object.values(model.files), model.tokens]) {
    // sherpa-onnx exits the process on a missing file; check first so the error is ours.
    if (!fs.existsSync(file)) throw new ObscuraError("FAILED_PRECONDITION", `${file} is missing; OBSCURA_SPEECH_MODEL_DIR=${model.dir} changed since it was read`);
  }
  const sherpa = createRequire(import.meta.url)("sherpa-onnx-node") as SherpaModule;
  const f = model.files;
  const layoutConfig: Record<SherpaLayout, () => Record<string, unknown>> = {
    moonshine: () => ({ moonshine: { preprocessor: f.preprocessor, encoder: f.encoder, uncachedDecoder: f.uncachedDecoder, cachedDecoder: f.cachedDecoder } }),
    "moonshine-v2": () => ({ moonshine: { encoder: f.encoder, mergedDecoder: f.mergedDecoder } }),
    transducer: () => ({ transducer: { encoder: f.encoder, decoder: f.decoder, joiner: f.joiner } }),
    // An unknown language would stop sherpa-onnx; "" lets Whisper detect the language instead.
    whisper: () => ({ whisper: { encoder: f.encoder, decoder: f.decoder, language: whisperLanguage(language), task: "transcribe" } }),
    "sense-voice": () => ({
      senseVoice: { model: f.model, language: SENSE_VOICE_LANGUAGES.includes(language) ? language : "auto", useInverseTextNormalization: 1 },
    }),
  };
  const config = {
    featConfig: { sampleRate: SPEECH_SAMPLE_RATE, featureDim: 80 },
    modelConfig: { ...layoutConfig[model.layout](), tokens: model.tokens, numThreads: onnxThreads(), provider: "cpu", debug: 0 },
    decodingMethod: "greedy_search",
  };
  const started = Date.now();
  let recognizer: SherpaRecognizer;
  try {
    recognizer = await sherpa.OfflineRecognizer.createAsync(config);
  } catch (cause) {
    throw new ObscuraError("FAILED_PRECONDITION", `sherpa-onnx could not load the ${model.layout} model in ${model.dir}: ${(cause as Error).message}`, { cause });
  }
  log.info("speech model loaded", { engine: `sherpa-onnx:${model.layout}`, dir: model.dir, language, ms: Date.now() - started });
  return new SherpaEngine(model, recognizer);
}

export class SherpaEngine implements SpeechEngine {
  readonly name: string;

  constructor(
    readonly model: SherpaModel,
    private readonly recognizer: SherpaRecognizer,
  ) {
    this.name = `sherpa-onnx:${model.layout}`;
  }

  async transcribe(samples: Float32Array): Promise<RecognizedText> {
    const stream = this.recognizer.createStream();
    stream.acceptWaveform({ samples, sampleRate: SPEECH_SAMPLE_RATE });
    const result = await this.recognizer.decodeAsync(stream);
    const text = cleanText(result.text ?? "");
    const words = wordsFromTokens(result, samples.length / SPEECH_SAMPLE_RATE);
    return words.length ? { text, words } : { text };
  }
}

/** SenseVoice prefixes tags such as <|en|><|NEUTRAL|><|Speech|> when asked; they are not words. */
function cleanText(text: string): string {
  return text.replace(/<\|[^|]*\|>/g, "").replace(/\s+/g, " ").trim();
}

/**
 * Words from per-token start times (transducers give them; Whisper and Moonshine do not). A token
 * starting with a space or "▁" starts a word; CJK characters are words of their own. A word ends
 * where the next token starts (or after its own duration when the model gives durations); the
 * last one at the end of the audio.
 */
export function wordsFromTokens(result: SherpaResult, audioSeconds: number): TranscriptWord[] {
  const tokens = result.tokens ?? [];
  const times = result.timestamps ?? [];
  if (!tokens.length || times.length !== tokens.length) return [];
  const words: TranscriptWord[] = [];
  tokens.forEach((token, i) => {
    const start = times[i];
    const tokenEnd = result.durations?.[i] ? start + result.durations[i] : (times[i + 1] ?? audioSeconds);
    const piece = token.replace(/\u2581/g, " ");
    const cjk = /^[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/.test(piece.trim());
    const last = words.at(-1);
    if (!last || /^\s/.test(piece) || cjk || /^[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/.test(last.word)) {
      if (piece.trim()) words.push({ start, end: tokenEnd, word: piece.trim() });
    } else {
      last.word += piece.trim();
      last.end = tokenEnd;
    }
  });
  return words.map((w) => ({ ...w, start: Math.max(0, w.start), end: Math.min(audioSeconds, Math.max(w.start, w.end)) }));
}
