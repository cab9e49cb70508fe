/**
 * Audio masking (RenderConfig.maskAudio) as an ffmpeg filter chain on the source's audio, so the
 * masked track has exactly the source's length, sample rate and channels:
 *
 * - SILENCE: `volume=0`: every sample zero.
 * - BEEP: a 1 kHz sine at -12 dBFS (amplitude 0.25) in every channel, replacing the sound over the
 *   whole track (`aeval`).
 * - SCRAMBLE with maskAudioParams [pitch, inversion] (each -1..1, default [0.32, -0.24]):
 *   1. pitch: every frequency (voice pitch and formants alike) is multiplied by 2^pitch, keeping
 *      the duration (`asetrate` + `aresample` + `atempo`): 0.32 -> x1.25 (about +3.8 semitones);
 *      -1..1 -> one octave down..up; 0 leaves the pitch.
 *   2. inversion: the band below fc = 3400 Hz x 2^inversion (-0.24 -> 2,879 Hz; -1..1 -> 1,700 to
 *      6,800 Hz, at most 0.45 x the sample rate) is turned upside down, f -> fc - f (ring
 *      modulation by a carrier at fc between two steep low-passes at fc): low voice energy moves
 *      high and high moves low, so words are no longer intelligible; everything above fc is lost.
 *   The length is kept. A voice scrambler hides words and the speaker's timbre from a listener;
 *   it is not a cipher (inversion is its own inverse) — use SILENCE or BEEP when no trace of the
 *   speech may remain.
 */
export const MASK_AUDIO_DEFAULT_PARAMS: readonly [number, number] = [0.32, -0.24];
export const BEEP_HZ = 1000;
export const BEEP_AMPLITUDE = 0.25;
export const INVERSION_BASE_HZ = 3400;

export type AudioMask = "SILENCE" | "BEEP" | "SCRAMBLE";

export interface ScrambleSettings {
  /** Frequency factor of the pitch shift. */
  pitchFactor: number;
  /** Carrier of the spectral inversion, Hz. */
  inversionHz: number;
}

export function scrambleSettings(params: readonly [number, number], sampleRate: number): ScrambleSettings {
  const clamp = (v: number) => (Number.isFinite(v) ? Math.max(-1, Math.min(1, v)) : 0);
  const pitchFactor = 2 ** clamp(params[0]);
  const nyquistLimit = 0.45 * (sampleRate > 0 ? sampleRate : 48000);
  const inversionHz = Math.round(Math.min(nyquistLimit, INVERSION_BASE_HZ * 2 ** clamp(params[1])));
  return { pitchFactor, inversionHz };
}

/** The `-af` filter chain for a mask, or null for none (audio kept as it is). */
export function audioMaskFilter(
  mask: AudioMask | null,
  params: readonly [number, number],
  audio: { sampleRate: number; channels: number },
): string | null {
  if (!mask) return null;
  const sr = audio.sampleRate > 0 ? audio.sampleRate : 48000;
  const channels = Math.max(1, Math.min(64, audio.channels || 1));
  if (mask === "SILENCE") return "volume=0";
  if (mask === "BEEP") return `aeval=exprs=${BEEP_AMPLITUDE}*sin(2*PI*${BEEP_HZ}*t):c=same`;
  const { pitchFactor, inversionHz } = scrambleSettings(params, sr);
  const chain: string[] = [];
  if (Math.abs(pitchFactor - 1) > 0.005) {
    chain.push(`asetrate=${Math.round(sr * pitchFactor)}`, `aresample=${sr}`, `atempo=${(1 / pitchFactor).toFixed(6)}`);
  }
  const lowpass = Array.from({ length: 4 }, () => `lowpass=f=${inversionHz}`);
  const carrier = `2*cos(2*PI*${inversionHz}*t)`;
  const exprs = Array.from({ length: channels }, (_, c) => `val(${c})*${carrier}`).join("|");
  chain.push(...lowpass, `aeval=exprs=${exprs}:c=same`, ...lowpass, "highpass=f=60");
  return chain.join(",");
}
