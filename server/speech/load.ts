/** Loading the chosen speech engine (native code: onnxruntime or sherpa-onnx); used by the worker only. */
import { ObscuraError } from "@/lib/errors";
import { DEFAULT_LANGUAGE_CODE, speechConfigFromEnv, speechEngineFor, type SpeechConfig, type SpeechEngine, type SpeechEngineSpec } from "./engine";
import { loadMoonshine } from "./moonshine";
import { loadSherpa } from "./sherpa";

/** Loads (once per process and model) the engine `speechEngineFor` chose. */
export function loadEngine(spec: SpeechEngineSpec): Promise<SpeechEngine> {
  return spec.runtime === "moonshine" ? loadMoonshine() : loadSherpa(spec.model, spec.language);
}

/** The engine for a language, loaded; FAILED_PRECONDITION with the refusal text when none serves it. */
export async function loadSpeechEngine(languageCode: string = DEFAULT_LANGUAGE_CODE, config: SpeechConfig = speechConfigFromEnv()): Promise<SpeechEngine> {
  const choice = speechEngineFor(languageCode, config);
  if (!choice.ok) throw new ObscuraError("FAILED_PRECONDITION", choice.reason);
  return loadEngine(choice.engine);
}
