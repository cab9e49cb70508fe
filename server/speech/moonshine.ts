/**
 * The built-in engine: Moonshine Tiny (English, MIT, Useful Sensors) run with onnxruntime-node.
 * Only the model files of @moonshine-ai/moonshine-js are used (its JS bundle targets browsers).
 *
 * Protocol: the encoder maps raw 16 kHz samples `input_values` [1, n] to `last_hidden_state`; the
 * merged decoder is run once per token (greedy argmax, start token 1, end token 2). Its first step
 * takes empty past key/values and use_cache_branch=false and returns the cross-attention (encoder)
 * key/values, which stay fixed; later steps feed back only the self-attention (decoder) ones.
 * Token ids are Llama SentencePiece ids, decoded with llama-tokenizer-js.
 */
import path from "node:path";
import { ObscuraError } from "@/lib/errors";
import { session, ort } from "../vision/onnx";
import { packageDir } from "../vision/models";
import { MOONSHINE_ENGINE, type RecognizedText, type SpeechEngine } from "./engine";
import { SPEECH_SAMPLE_RATE } from "./extract";

const START_TOKEN = 1;
const END_TOKEN = 2;
/** Moonshine speaks ~3 tokens per second; more than 6 means the decoder is looping. */
const MAX_TOKENS_PER_SECOND = 6;
const MIN_TOKENS = 8;
/** The encoder's convolutions need ~0.1 s of input; shorter segments are padded with silence. */
const MIN_SAMPLES = 4000;
/**
 * Quiet segments (peak below QUIET_PEAK) are raised to a peak of BOOSTED_PEAK, by at most
 * MAX_GAIN: Moonshine misreads quiet speech (espeak at -35 dB: "The click brown fox jump silver
 * blazing dog."; raised: word-perfect). Normal levels are left alone.
 */
const QUIET_PEAK = 0.25;
const BOOSTED_PEAK = 0.5;
const MAX_GAIN = 100;

/** Folder of the quantized Moonshine Tiny files (env OBSCURA_MOONSHINE_DIR overrides). */
export function moonshineModelDir(): string {
  return packageDir("@moonshine-ai/moonshine-js", "dist/model/tiny/quantized", "encoder_model.onnx", "OBSCURA_MOONSHINE_DIR");
}

interface Decoder {
  session: ort.InferenceSession;
  layers: number;
  heads: number;
  headDim: number;
}

let loaded: Promise<MoonshineEngine> | null = null;

/** The engine, loaded once per process. */
export function loadMoonshine(): Promise<MoonshineEngine> {
  loaded ??= (async () => {
    const dir = moonshineModelDir();
    const [encoder, decoder, tokenizer] = await Promise.all([
      session(path.join(dir, "encoder_model.onnx")),
      session(path.join(dir, "decoder_model_merged.onnx")),
      import("llama-tokenizer-js").then((m) => m.default),
    ]);
    return new MoonshineEngine(encoder, describeDecoder(decoder), tokenizer);
  })().catch((e) => {
    loaded = null;
    throw e;
  });
  return loaded;
}

/** Layer count from the past_key_values inputs; heads and head size from their shapes. */
function describeDecoder(s: ort.InferenceSession): Decoder {
  const layers = new Set(s.inputNames.flatMap((n) => /^past_key_values\.(\d+)\./.exec(n)?.[1] ?? [])).size;
  const meta = s.inputMetadata.find((m) => m.name === "past_key_values.0.decoder.key");
  const shape = meta && meta.isTensor ? meta.shape : [];
  const heads = typeof shape[1] === "number" ? shape[1] : 8;
  const headDim = typeof shape[3] === "number" ? shape[3] : 36;
  if (!layers) throw new ObscuraError("INTERNAL", "the Moonshine decoder has no past_key_values inputs; is decoder_model_merged.onnx the merged decoder?");
  return { session: s, layers, heads, headDim };
}

type Tokenizer = { vocabById: string[]; decode(ids: number[], addBos?: boolean, addPrecedingSpace?: boolean): string };

export class MoonshineEngine implements SpeechEngine {
  readonly name = MOONSHINE_ENGINE;

  constructor(
    private readonly encoder: ort.InferenceSession,
    private readonly decoder: Decoder,
    private readonly tokenizer: Tokenizer,
  ) {}

  async transcribe(samples: Float32Array, signal?: AbortSignal): Promise<RecognizedText> {
    const level = boostQuiet(samples);
    const input = level.length >= MIN_SAMPLES ? level : padTo(level, MIN_SAMPLES);
    const { last_hidden_state: hidden } = await this.encoder.run({ input_values: new ort.Tensor("float32", input, [1, input.length]) });
    const { session: dec, layers, heads, headDim } = this.decoder;
    const empty = new ort.Tensor("float32", new Float32Array(0), [1, heads, 0, headDim]);
    const past: Record<string, ort.Tensor> = {};
    for (let l = 0; l < layers; l++) {
      for (const part of ["decoder", "encoder"]) for (const kv of ["key", "value"]) past[`past_key_values.${l}.${part}.${kv}`] = empty;
    }
    const maxTokens = Math.max(MIN_TOKENS, Math.ceil((samples.length / SPEECH_SAMPLE_RATE) * MAX_TOKENS_PER_SECOND));
    const tokens: number[] = [];
    let next = START_TOKEN;
    for (let step = 0; step < maxTokens; step++) {
      if (signal?.aborted) throw new ObscuraError("CANCELLED", "speech transcription was cancelled");
      const out = await dec.run({
        input_ids: new ort.Tensor("int64", BigInt64Array.of(BigInt(next)), [1, 1]),
        encoder_hidden_states: hidden,
        use_cache_branch: new ort.Tensor("bool", [step > 0], [1]),
        ...past,
      });
      next = argmaxLast(out.logits);
      if (next === END_TOKEN) break;
      tokens.push(next);
      // The encoder (cross-attention) values come out of the first step only; on later steps the
      // cache branch returns placeholders for them, so they must not replace the real ones.
      for (const name of dec.outputNames) {
        if (!name.startsWith("present.")) continue;
        const key = "past_key_values." + name.slice("present.".length);
        if (step === 0 || key.includes(".decoder.")) past[key] = out[name] as ort.Tensor;
      }
    }
    return { text: this.decode(tokens) };
  }

  private decode(ids: number[]): string {
    const known = ids.filter((id) => id > END_TOKEN && id < this.tokenizer.vocabById.length);
    return known.length ? this.tokenizer.decode(known, false, true).trim() : "";
  }
}

function argmaxLast(logits: ort.Tensor): number {
  const data = logits.data as Float32Array;
  const vocab = logits.dims[logits.dims.length - 1];
  const off = data.length - vocab;
  let best = 0;
  for (let k = 1; k < vocab; k++) if (data[off + k] > data[off + best]) best = k;
  return best;
}

function boostQuiet(samples: Float32Array): Float32Array {
  let peak = 0;
  for (let i = 0; i < samples.length; i++) peak = Math.max(peak, Math.abs(samples[i]));
  if (peak >= QUIET_PEAK || peak === 0) return samples;
  const gain = Math.min(MAX_GAIN, BOOSTED_PEAK / peak);
  return samples.map((x) => x * gain);
}

function padTo(samples: Float32Array, length: number): Float32Array {
  const out = new Float32Array(length);
  out.set(samples);
  return out;
}
