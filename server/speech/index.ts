/**
 * server/speech — speech transcription (SPEECH_TRANSCRIPTION); see docs/speech.md.
 *
 * - engine:     `speechEngineFor(languageCode, config?)` -> { ok, engine } | { ok: false, reason }
 *               without loading a model (for 400 answers at request time); `speechConfigFromEnv()`
 *               reads OBSCURA_SPEECH_MODEL_DIR / _MODEL_LANGUAGES / _BUILTIN; `loadSpeechEngine`
 * - transcribe: `transcribeMedia(file, { languageCode, signal, onProgress })` -> Transcript
 *               (schema obscura.transcript/v1)
 * - export:     `toWebVTT(transcript)`, `toTranscriptJson(transcript)`
 * - extract:    `probeAudio(file)`, `extractAudio(file)` -> 16 kHz mono float32 chunks (ffmpeg pipe)
 * - segment:    `Segmenter` (streaming: push samples, get finished segments), `segmentSamples`
 * - layout:     `detectSherpaModel(dir)`: which sherpa-onnx model a folder holds
 *
 * The engines themselves (moonshine.ts: built-in Moonshine Tiny English via onnxruntime-node;
 * sherpa.ts: operator models via sherpa-onnx-node) are reached through load.ts only: the API
 * imports engine.ts alone to answer whether a language is served.
 */
export {
  DEFAULT_LANGUAGE_CODE,
  MOONSHINE_ENGINE,
  primaryLanguage,
  speechConfigFromEnv,
  speechEngineFor,
  type RecognizedText,
  type SpeechConfig,
  type SpeechEngine,
  type SpeechEngineChoice,
  type SpeechEngineSpec,
  type TranscriptWord,
} from "./engine";
export { loadEngine, loadSpeechEngine } from "./load";
export {
  TRANSCRIPT_SCHEMA,
  emptyTranscript,
  transcribeMedia,
  type TranscribeOptions,
  type Transcript,
  type TranscriptSegment,
} from "./transcribe";
export { toTranscriptJson, toWebVTT, vttTime, type WebVttOptions } from "./export";
export { SPEECH_SAMPLE_RATE, extractAudio, probeAudio, type AudioStreamInfo } from "./extract";
export { DEFAULT_SEGMENTER_OPTIONS, Segmenter, segmentSamples, type SegmenterOptions, type SpeechSegment } from "./segment";
export { SHERPA_LAYOUTS, detectSherpaModel, type SherpaLayout, type SherpaModel } from "./layout";
