/**
 * Which engine transcribes a language, decided without loading any model (the API asks at request
 * time to answer 400 when no model serves the language):
 *
 * - The operator's sherpa-onnx model (OBSCURA_SPEECH_MODEL_DIR) when it serves the language:
 *   OBSCURA_SPEECH_MODEL_LANGUAGES ("de,fr", "*" = any) when set, else the layout's own languages
 *   (multilingual Whisper: any; *.en Whisper, Moonshine, transducers: en; SenseVoice: zh,en,ja,ko,yue).
 * - Else, for English, the built-in Moonshine Tiny (unless OBSCURA_SPEECH_BUILTIN=0).
 * - Else a refusal that says what to install.
 *
 * Languages are compared by their primary subtag: "en-US", "en-GB" and "en" are all English.
 * Engines are imported on `load()` only, so the API can ask without pulling in onnxruntime or
 * sherpa-onnx.
 */
import path from "node:path";
import { ObscuraError } from "@/lib/errors";
import { log } from "../log";
import { DEFAULT_LANGUAGE_CODE } from "@/lib/api/video";
import { detectSherpaModel, type SherpaModel } from "./layout";

/** Name of the built-in engine (kept here so choosing an engine loads no native code). */
export const MOONSHINE_ENGINE = "moonshine-tiny-en";

/** The request's default language (videoContext.speechTranscriptionConfig.languageCode). */
export { DEFAULT_LANGUAGE_CODE };

export interface TranscriptWord {
  /** Seconds (relative to the audio handed to the engine; absolute in a Transcript). */
  start: number;
  end: number;
  word: string;
}

export interface RecognizedText {
  text: string;
  /** Only when the engine reports token times. */
  words?: TranscriptWord[];
}

/** A loaded recogniser: 16 kHz mono samples in, text out. */
export interface SpeechEngine {
  readonly name: string;
  transcribe(samples: Float32Array, signal?: AbortSignal): Promise<RecognizedText>;
}

/** Settings read from the environment (or given directly, e.g. by tests). */
export interface SpeechConfig {
  /** OBSCURA_SPEECH_MODEL_DIR: folder of an operator-installed sherpa-onnx model. */
  modelDir: string | null;
  /** OBSCURA_SPEECH_MODEL_LANGUAGES as primary subtags ("*" = any); null = the layout's default. */
  modelLanguages: string[] | null;
  /** OBSCURA_SPEECH_BUILTIN (default on; "0" or "false" turns the built-in English model off). */
  builtin: boolean;
}

export function speechConfigFromEnv(env: Record<string, string | undefined> = process.env): SpeechConfig {
  const dir = env.OBSCURA_SPEECH_MODEL_DIR?.trim();
  const langs = env.OBSCURA_SPEECH_MODEL_LANGUAGES?.trim();
  return {
    modelDir: dir ? dir : null,
    modelLanguages: langs ? langs.split(",").map((l) => primaryLanguage(l.trim())).filter(Boolean) : null,
    builtin: !/^(0|false|no|off)$/i.test(env.OBSCURA_SPEECH_BUILTIN?.trim() ?? ""),
  };
}

/** What `speechEngineFor` decided: an engine to load, or why none can serve the language. */
export type SpeechEngineChoice =
  | { ok: true; engine: SpeechEngineSpec }
  | { ok: false; reason: string };

/**
 * The engine chosen, as data: load it with `loadEngine` (load.ts), which only the worker imports,
 * so the API process (which only asks whether a language is served) never bundles native code.
 */
export type SpeechEngineSpec =
  | { runtime: "moonshine"; name: string; languageCode: string }
  | { runtime: "sherpa"; name: string; languageCode: string; model: SherpaModel; language: string };

/** Problems with the model folder already logged (each once per process). */
const warned = new Set<string>();

const BCP47 = /^[a-z]{2,3}(-[a-z0-9]{1,8})*$/i;

/** "en-US" -> "en", "*" -> "*"; "" for something that is not a language tag. */
export function primaryLanguage(code: string): string {
  if (code === "*") return "*";
  return BCP47.test(code) ? code.split("-")[0].toLowerCase() : "";
}

/** The engine for a BCP-47 language code (default en-US), or a refusal; never loads a model. */
export function speechEngineFor(languageCode: string = DEFAULT_LANGUAGE_CODE, config: SpeechConfig = speechConfigFromEnv()): SpeechEngineChoice {
  const code = languageCode.trim() || DEFAULT_LANGUAGE_CODE;
  const language = primaryLanguage(code);
  if (!language || language === "*") {
    return { ok: false, reason: `languageCode must be a BCP-47 language tag such as "en-US", "en" or "de-DE", not "${languageCode}"` };
  }
  let operator: SherpaModel | null = null;
  if (config.modelDir) {
    try {
      operator = detectSherpaModel(config.modelDir);
    } catch (e) {
      // A broken model folder is the operator's to fix; say so rather than quietly falling back.
      // The log has the full path; API clients get the folder's name only (no server paths).
      const message = (e as Error).message;
      if (!warned.has(message)) {
        warned.add(message);
        log.warn("speech model folder not usable", { dir: config.modelDir, error: message });
      }
      return { ok: false, reason: message.split(config.modelDir).join(path.basename(config.modelDir)) };
    }
    const served = config.modelLanguages ?? operator.defaultLanguages;
    if (served.includes("*") || served.includes(language)) {
      return { ok: true, engine: { runtime: "sherpa", name: `sherpa-onnx:${operator.layout}`, languageCode: code, model: operator, language } };
    }
  }
  // The built-in model's files come with an installed dependency; if they were removed, load()
  // says which folder it looked in.
  if (language === "en" && config.builtin) {
    return { ok: true, engine: { runtime: "moonshine", name: MOONSHINE_ENGINE, languageCode: code } };
  }
  return { ok: false, reason: refusalText(code, language, config, operator) };
}

function refusalText(code: string, language: string, config: SpeechConfig, operator: SherpaModel | null): string {
  const served = operator ? (config.modelLanguages ?? operator.defaultLanguages).join(",") : "";
  const what = operator
    ? `the installed speech model (${operator.layout} in OBSCURA_SPEECH_MODEL_DIR) serves ${served}, not ${language}`
    : language === "en"
      ? "the built-in English model is turned off (OBSCURA_SPEECH_BUILTIN=0) and no other speech model is installed"
      : "the built-in model is English only and no other speech model is installed";
  return (
    `no speech model is installed for language "${code}": ${what}. ` +
    `An operator can install a sherpa-onnx model that serves it (for example Whisper) by setting ` +
    `OBSCURA_SPEECH_MODEL_DIR to its folder and OBSCURA_SPEECH_MODEL_LANGUAGES to "${language}" or "*"; see docs/speech.md`
  );
}
