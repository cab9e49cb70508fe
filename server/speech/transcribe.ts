/**
 * transcribeMedia: media file -> Transcript. ffmpeg decodes the first audio stream (extract.ts),
 * the segmenter cuts it at silences (segment.ts), and each segment goes to the engine chosen for
 * the language (engine.ts) as soon as it is final, so decoding, cutting and recognising overlap and
 * memory holds one segment at a time.
 */
import { ObscuraError } from "@/lib/errors";
import { log } from "../log";
import { DEFAULT_LANGUAGE_CODE, speechConfigFromEnv, speechEngineFor, type SpeechConfig, type SpeechEngine, type TranscriptWord } from "./engine";
import { extractAudio, probeAudio, SPEECH_SAMPLE_RATE } from "./extract";
import { loadEngine } from "./load";
import { Segmenter, type SegmenterOptions, type SpeechSegment } from "./segment";

export const TRANSCRIPT_SCHEMA = "obscura.transcript/v1";

export interface TranscriptSegment {
  /** 1, 2, 3, ... in time order. */
  id: number;
  /** Seconds from the start of the audio, 3 decimals. */
  start: number;
  end: number;
  text: string;
  /** Word times in seconds, only when the engine reports token times. */
  words?: TranscriptWord[];
}

export interface Transcript {
  schema: typeof TRANSCRIPT_SCHEMA;
  /** The BCP-47 code asked for, e.g. "en-US". */
  languageCode: string;
  /** "moonshine-tiny-en" or "sherpa-onnx:<layout>" (the engine chosen, even when there was no audio). */
  engine: string;
  /** Duration of the media (its audio stream when known). */
  durationSeconds: number;
  segments: TranscriptSegment[];
  stats: {
    /** Audio decoded, seconds. */
    audioSeconds: number;
    /** Audio the segmenter judged speech (sum of segment spans), seconds. */
    speechSeconds: number;
    /** Wall-clock time of decoding, segmenting and recognising (model loading excluded). */
    processingSeconds: number;
  };
}

export interface TranscribeOptions {
  /** BCP-47, default "en-US". */
  languageCode?: string;
  signal?: AbortSignal;
  /** Fraction 0..1 of the audio time processed; never decreases; 1 on success. */
  onProgress?: (fraction: number) => void;
  /** Engine settings; default from the environment (OBSCURA_SPEECH_*). */
  config?: SpeechConfig;
  segmenter?: Partial<SegmenterOptions>;
}

/**
 * Transcribes the first audio stream of `file`. A media without audio gives an empty transcript.
 * Rejects with FAILED_PRECONDITION when no engine serves the language (the refusal text),
 * CANCELLED on abort, INVALID_ARGUMENT when ffmpeg cannot read the file.
 */
export async function transcribeMedia(file: string, opts: TranscribeOptions = {}): Promise<Transcript> {
  const languageCode = opts.languageCode?.trim() || DEFAULT_LANGUAGE_CODE;
  const choice = speechEngineFor(languageCode, opts.config ?? speechConfigFromEnv());
  if (!choice.ok) throw new ObscuraError("FAILED_PRECONDITION", choice.reason);
  const progress = progressReporter(opts.onProgress);
  const info = await probeAudio(file, { signal: opts.signal });
  if (!info.hasAudio) {
    progress(1);
    return emptyTranscript(languageCode, choice.engine.name, info.durationSeconds ?? 0);
  }
  const engine = await loadEngine(choice.engine);
  const started = performance.now();
  const segmenter = new Segmenter({ ...opts.segmenter, sampleRate: SPEECH_SAMPLE_RATE });
  const segments: TranscriptSegment[] = [];
  let samples = 0;
  let speechSeconds = 0;
  const duration = info.durationSeconds;
  const recognize = async (found: SpeechSegment[]) => {
    for (const s of found) {
      speechSeconds += s.end - s.start;
      const segment = await recognizeSegment(engine, s, segments.length + 1, opts.signal);
      if (segment) segments.push(segment);
      if (duration) progress(Math.min(0.999, s.end / duration));
    }
  };
  for await (const chunk of extractAudio(file, { signal: opts.signal })) {
    samples += chunk.length;
    await recognize(segmenter.push(chunk));
    if (duration) progress(Math.min(0.999, segmenter.settledSeconds / duration));
  }
  await recognize(segmenter.finish());
  const audioSeconds = samples / SPEECH_SAMPLE_RATE;
  const processingSeconds = (performance.now() - started) / 1000;
  progress(1);
  log.info("speech transcribed", {
    engine: engine.name,
    languageCode,
    audioSeconds: round3(audioSeconds),
    segments: segments.length,
    realTimeFactor: processingSeconds > 0 ? round3(audioSeconds / processingSeconds) : null,
  });
  return {
    schema: TRANSCRIPT_SCHEMA,
    languageCode,
    engine: engine.name,
    durationSeconds: round3(duration ?? audioSeconds),
    segments,
    stats: { audioSeconds: round3(audioSeconds), speechSeconds: round3(speechSeconds), processingSeconds: round3(processingSeconds) },
  };
}

async function recognizeSegment(engine: SpeechEngine, s: SpeechSegment, id: number, signal?: AbortSignal): Promise<TranscriptSegment | null> {
  if (signal?.aborted) throw new ObscuraError("CANCELLED", "speech transcription was cancelled");
  const { text, words } = await engine.transcribe(s.samples, signal);
  const clean = text.replace(/\s+/g, " ").trim();
  // The segmenter hears energy, not words: a segment of noise may come back empty.
  if (!clean) return null;
  const segment: TranscriptSegment = { id, start: round3(s.start), end: round3(s.end), text: clean };
  if (words?.length) {
    // Engine word times are relative to the padded audio it was given.
    segment.words = words.map((w) => ({ start: round3(s.audioStart + w.start), end: round3(s.audioStart + w.end), word: w.word }));
  }
  return segment;
}

export function emptyTranscript(languageCode: string, engine: string, durationSeconds: number): Transcript {
  return {
    schema: TRANSCRIPT_SCHEMA,
    languageCode,
    engine,
    durationSeconds: round3(durationSeconds),
    segments: [],
    stats: { audioSeconds: 0, speechSeconds: 0, processingSeconds: 0 },
  };
}

/** Calls `onProgress` only when the fraction grows by at least 0.1 % (or reaches 1). */
function progressReporter(onProgress?: (fraction: number) => void): (fraction: number) => void {
  let last = 0;
  return (fraction) => {
    if (!onProgress || !(fraction > last) || (fraction < 1 && fraction - last < 0.001)) return;
    last = Math.min(1, fraction);
    onProgress(last);
  };
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
