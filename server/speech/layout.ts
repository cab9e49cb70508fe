/**
 * Which sherpa-onnx model an operator installed (pure file listing, no loading). The model folder
 * (OBSCURA_SPEECH_MODEL_DIR) is one unpacked sherpa-onnx release archive; its layout is told apart
 * by the files in it (int8 files preferred when both precisions are there):
 *
 * | layout       | files                                                                    |
 * |--------------|--------------------------------------------------------------------------|
 * | moonshine    | preprocess.onnx, encode*.onnx, uncached_decode*.onnx, cached_decode*.onnx, tokens.txt |
 * | moonshine-v2 | encoder_model*.onnx/.ort, decoder_model_merged*.onnx/.ort, tokens.txt    |
 * | transducer   | *encoder*.onnx, *decoder*.onnx, *joiner*.onnx, *tokens.txt               |
 * | whisper      | *encoder*.onnx, *decoder*.onnx, *tokens.txt                              |
 * | sense-voice  | model*.onnx, tokens.txt                                                  |
 */
import fs from "node:fs";
import path from "node:path";
import { ObscuraError } from "@/lib/errors";

export const SHERPA_LAYOUTS = ["moonshine", "moonshine-v2", "transducer", "whisper", "sense-voice"] as const;
export type SherpaLayout = (typeof SHERPA_LAYOUTS)[number];

export interface SherpaModel {
  dir: string;
  layout: SherpaLayout;
  /** Model files by role (encoder, decoder, joiner, model, preprocessor, ...), absolute paths. */
  files: Record<string, string>;
  tokens: string;
  /** Languages served when OBSCURA_SPEECH_MODEL_LANGUAGES is not set ("*" = any). */
  defaultLanguages: string[];
}

export const SENSE_VOICE_LANGUAGES = ["zh", "en", "ja", "ko", "yue"];

/** The languages multilingual Whisper knows (its tokenizer's codes, as sherpa-onnx accepts them). */
export const WHISPER_LANGUAGES = (
  "af am ar as az ba be bg bn bo br bs ca cs cy da de el en es et eu fa fi fo fr gl gu ha haw he hi hr " +
  "ht hu hy id is it ja jw ka kk km kn ko la lb ln lo lt lv mg mi mk ml mn mr ms mt my ne nl nn no oc pa " +
  "pl ps pt ro ru sa sd si sk sl sn so sq sr su sv sw ta te tg th tk tl tr tt uk ur uz vi yi yo zh"
).split(" ");

/** Whisper's code for a BCP-47 primary subtag ("nb" -> "no", "jv" -> "jw"), or "" if it has none. */
export function whisperLanguage(language: string): string {
  const code = ({ nb: "no", jv: "jw", iw: "he" } as Record<string, string>)[language] ?? language;
  return WHISPER_LANGUAGES.includes(code) ? code : "";
}

const EXPECTED =
  "one sherpa-onnx offline model: Whisper (*encoder*.onnx, *decoder*.onnx, *tokens.txt), " +
  "SenseVoice (model*.onnx, tokens.txt), a transducer (*encoder*.onnx, *decoder*.onnx, *joiner*.onnx, *tokens.txt), " +
  "Moonshine (preprocess.onnx, encode*.onnx, uncached_decode*.onnx, cached_decode*.onnx, tokens.txt) or " +
  "Moonshine v2 (encoder_model*.onnx, decoder_model_merged*.onnx, tokens.txt)";

/** Works out which sherpa-onnx model a folder holds; FAILED_PRECONDITION naming the folder if none. */
export function detectSherpaModel(dir: string): SherpaModel {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => fs.statSync(path.join(/*turbopackIgnore: true*/ dir, n)).isFile());
  } catch (e) {
    throw new ObscuraError("FAILED_PRECONDITION", `OBSCURA_SPEECH_MODEL_DIR=${dir} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); it must be a folder holding ${EXPECTED}`);
  }
  const onnx = names.filter((n) => /\.onnx$/i.test(n));
  const pick = (re: RegExp, from = onnx) => prefer(from.filter((n) => re.test(n)));
  const tokens = prefer(names.filter((n) => /tokens\.txt$/i.test(n)));
  const abs = (files: Record<string, string | null>) => Object.fromEntries(Object.entries(files).map(([k, v]) => [k, path.join(/*turbopackIgnore: true*/ dir, v!)]));
  const model = (layout: SherpaLayout, files: Record<string, string | null>, defaultLanguages: string[]): SherpaModel => ({
    dir,
    layout,
    files: abs(files),
    tokens: path.join(/*turbopackIgnore: true*/ dir, tokens!),
    defaultLanguages,
  });

  if (tokens) {
    const m1 = { preprocessor: pick(/^preprocess/i), encoder: pick(/^encode[.\-_]/i), uncachedDecoder: pick(/^uncached_decode/i), cachedDecoder: pick(/^cached_decode/i) };
    if (allFound(m1)) return model("moonshine", m1, ["en"]);
    const withOrt = names.filter((n) => /\.(onnx|ort)$/i.test(n));
    const m2 = { encoder: pick(/^encoder_model/i, withOrt), mergedDecoder: pick(/^decoder_model_merged/i, withOrt) };
    if (allFound(m2)) return model("moonshine-v2", m2, ["en"]);
    const encoder = pick(/encoder/i);
    const decoder = pick(/decoder/i);
    const joiner = pick(/joiner/i);
    if (encoder && decoder && joiner) return model("transducer", { encoder, decoder, joiner }, ["en"]);
    if (encoder && decoder) {
      // Whisper's English-only checkpoints are named tiny.en, base.en, ...; the others are multilingual.
      const languages = /\.en[-.]/i.test(encoder) ? ["en"] : [...WHISPER_LANGUAGES, "nb", "jv", "iw"];
      return model("whisper", { encoder, decoder }, languages);
    }
    const single = pick(/^model/i);
    if (single) return model("sense-voice", { model: single }, SENSE_VOICE_LANGUAGES);
  }
  const found = names.length ? names.slice(0, 12).join(", ") + (names.length > 12 ? ", ..." : "") : "no files";
  throw new ObscuraError(
    "FAILED_PRECONDITION",
    `OBSCURA_SPEECH_MODEL_DIR=${dir} holds no speech model this server recognises (found: ${found}); expected ${EXPECTED}. See docs/speech.md`,
  );
}

/** Of several candidates for a role, the int8 one, then the shortest name (no epoch/avg variants). */
function prefer(names: string[]): string | null {
  if (!names.length) return null;
  const int8 = names.filter((n) => /int8/i.test(n));
  const pool = int8.length ? int8 : names;
  return [...pool].sort((a, b) => a.length - b.length || a.localeCompare(b))[0];
}

function allFound(files: Record<string, string | null>): boolean {
  return Object.values(files).every(Boolean);
}

