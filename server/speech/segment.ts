/**
 * Cuts a 16 kHz mono stream into speech segments at its silences (pure code, no I/O).
 *
 * Each frame (30 ms) gets an energy in dB, measured after a 150-4000 Hz band-pass (two
 * second-order Butterworth sections): mains hum and rumble below and hiss above the band where
 * speech carries its energy weigh little.
 *
 * A frame is speech when its energy is at least `thresholdDb` above the noise floor and above
 * `minLevelDb`. The noise floor is a low percentile (`noisePercentile`) of the frame energies
 * within ±noiseWindowSeconds/2 of the frame, so it follows the recording: a quiet recording and a
 * loud one are cut alike, and a steady background (hum, fan, a held tone) becomes the floor instead
 * of one endless "speech" run. Looking ahead by half the window delays decisions by that much,
 * which is why the first frames of a file are judged as well as the rest.
 *
 * Speech frames are joined into a segment until a silence of `minSilenceSeconds`; a segment with
 * less than `minSpeechSeconds` from its first to its last speech frame (a click, a cough) is
 * dropped. A segment reaching `maxSegmentSeconds` is cut at its quietest frame in the second half,
 * and the rest starts the next segment: recognisers work best on short inputs (Moonshine up to
 * ~20-30 s). The recogniser gets `padSeconds` of audio on either side of the speech (not at forced
 * cuts, where the audio would be heard twice); the segment's start/end are the speech itself.
 *
 * Memory: the samples of the open segment plus the look-ahead, never the whole stream.
 */

export interface SegmenterOptions {
  sampleRate: number;
  /** Length of one analysis frame. */
  frameSeconds: number;
  /** A frame is speech when its energy is this much above the local noise floor. */
  thresholdDb: number;
  /** Frames quieter than this (dBFS in the band) are never speech. */
  minLevelDb: number;
  /** Span of the frames (centred on the frame judged) whose energies set the noise floor. */
  noiseWindowSeconds: number;
  /** Which percentile of those energies is the floor (0.1 = the quietest tenth). */
  noisePercentile: number;
  /** A silence at least this long ends a segment; shorter pauses stay inside it. */
  minSilenceSeconds: number;
  /** Segments with less speech than this are dropped. */
  minSpeechSeconds: number;
  /** Audio given to the recogniser before and after the speech (at most minSilence / 2). */
  padSeconds: number;
  /** Longer speech runs are cut at their quietest frame. */
  maxSegmentSeconds: number;
}

export const DEFAULT_SEGMENTER_OPTIONS: Readonly<SegmenterOptions> = {
  sampleRate: 16000,
  frameSeconds: 0.03,
  thresholdDb: 10,
  minLevelDb: -75,
  noiseWindowSeconds: 4,
  noisePercentile: 0.1,
  minSilenceSeconds: 0.4,
  minSpeechSeconds: 0.2,
  padSeconds: 0.15,
  maxSegmentSeconds: 20,
};

export interface SpeechSegment {
  /** Seconds from the start of the stream to the first speech frame. */
  start: number;
  /** Seconds from the start of the stream to the end of the last speech frame (or the cut). */
  end: number;
  /** Seconds from the start of the stream to samples[0] (start minus padding). */
  audioStart: number;
  /** The audio for the recogniser: the speech plus padding. */
  samples: Float32Array;
}

/** Energy below which a frame counts as this level (digital silence would be -Infinity). */
const SILENCE_DB = -100;
const BAND_LOW_HZ = 150;
const BAND_HIGH_HZ = 4000;

/** A second-order IIR section (RBJ cookbook, Q = 1/sqrt 2), state kept across calls. */
class Biquad {
  private b0: number;
  private b1: number;
  private b2: number;
  private a1: number;
  private a2: number;
  private x1 = 0;
  private x2 = 0;
  private y1 = 0;
  private y2 = 0;

  constructor(kind: "lowpass" | "highpass", hz: number, sampleRate: number) {
    const w = (2 * Math.PI * Math.min(hz, sampleRate * 0.45)) / sampleRate;
    const alpha = Math.sin(w) / Math.SQRT2;
    const cos = Math.cos(w);
    const a0 = 1 + alpha;
    const b1 = kind === "lowpass" ? 1 - cos : -(1 + cos);
    this.b0 = Math.abs(b1) / 2 / a0;
    this.b1 = b1 / a0;
    this.b2 = this.b0;
    this.a1 = (-2 * cos) / a0;
    this.a2 = (1 - alpha) / a0;
  }

  next(x: number): number {
    const y = this.b0 * x + this.b1 * this.x1 + this.b2 * this.x2 - this.a1 * this.y1 - this.a2 * this.y2;
    this.x2 = this.x1;
    this.x1 = x;
    this.y2 = this.y1;
    this.y1 = y;
    return y;
  }
}

interface OpenSegment {
  startFrame: number;
  lastSpeechFrame: number;
  /** Whether the start is a forced cut (no left padding). */
  cut: boolean;
}

export class Segmenter {
  readonly options: SegmenterOptions;
  private readonly frameLen: number;
  private readonly lookahead: number;
  private readonly padSamples: number;
  private readonly silenceFrames: number;
  private readonly maxFrames: number;
  /** Samples kept, from absolute index `bufStart`. */
  private buf = new Float32Array(1 << 16);
  private bufStart = 0;
  private bufLen = 0;
  /** Energies (dB) of frames from absolute index `energyBase`. */
  private energies: number[] = [];
  private energyBase = 0;
  /** Frames whose energy is known, and frames already judged. */
  private framesMeasured = 0;
  private framesDecided = 0;
  private readonly highpass: Biquad;
  private readonly lowpass: Biquad;
  private open: OpenSegment | null = null;
  private finished = false;

  constructor(options: Partial<SegmenterOptions> = {}) {
    const o = { ...DEFAULT_SEGMENTER_OPTIONS, ...options };
    o.padSeconds = Math.max(0, Math.min(o.padSeconds, o.minSilenceSeconds / 2));
    this.options = o;
    this.frameLen = Math.max(1, Math.round(o.frameSeconds * o.sampleRate));
    const frameSec = this.frameLen / o.sampleRate;
    this.lookahead = Math.max(1, Math.round(o.noiseWindowSeconds / 2 / frameSec));
    this.padSamples = Math.round(o.padSeconds * o.sampleRate);
    this.silenceFrames = Math.max(1, Math.round(o.minSilenceSeconds / frameSec));
    this.maxFrames = Math.max(2, Math.floor(o.maxSegmentSeconds / frameSec));
    this.highpass = new Biquad("highpass", BAND_LOW_HZ, o.sampleRate);
    this.lowpass = new Biquad("lowpass", BAND_HIGH_HZ, o.sampleRate);
  }

  /** Adds samples; returns the segments that became final. */
  push(samples: Float32Array): SpeechSegment[] {
    if (this.finished) throw new Error("Segmenter.push after finish");
    this.append(samples);
    const out: SpeechSegment[] = [];
    const total = this.bufStart + this.bufLen;
    while ((this.framesMeasured + 1) * this.frameLen <= total) this.measure(this.framesMeasured * this.frameLen, this.frameLen);
    while (this.framesDecided + this.lookahead < this.framesMeasured) this.decide(out);
    this.trim();
    return out;
  }

  /** Ends the stream; returns the last segments. */
  finish(): SpeechSegment[] {
    if (this.finished) return [];
    this.finished = true;
    const out: SpeechSegment[] = [];
    const total = this.bufStart + this.bufLen;
    const tail = total - this.framesMeasured * this.frameLen;
    if (tail > 0) this.measure(this.framesMeasured * this.frameLen, tail);
    while (this.framesDecided < this.framesMeasured) this.decide(out);
    if (this.open) this.close(this.open.lastSpeechFrame + 1, out);
    return out;
  }

  /**
   * Seconds of the stream that are settled: everything before this point has been handed out as
   * a segment or judged silence. Grows smoothly with pushed audio (minus the look-ahead).
   */
  get settledSeconds(): number {
    const frames = this.open ? this.open.startFrame : this.framesDecided;
    const end = this.bufStart + this.bufLen;
    return Math.min(end, frames * this.frameLen) / this.options.sampleRate;
  }

  private append(samples: Float32Array): void {
    if (this.bufLen + samples.length > this.buf.length) {
      let cap = this.buf.length;
      while (cap < this.bufLen + samples.length) cap *= 2;
      const next = new Float32Array(cap);
      next.set(this.buf.subarray(0, this.bufLen));
      this.buf = next;
    }
    this.buf.set(samples, this.bufLen);
    this.bufLen += samples.length;
  }

  private measure(absStart: number, length: number): void {
    const from = absStart - this.bufStart;
    let sum = 0;
    for (let i = from; i < from + length; i++) {
      const y = this.lowpass.next(this.highpass.next(this.buf[i]));
      sum += y * y;
    }
    const db = sum > 0 ? 10 * Math.log10(sum / length) : SILENCE_DB;
    this.energies.push(Math.max(SILENCE_DB, db));
    this.framesMeasured++;
  }

  private energy(frame: number): number {
    return this.energies[frame - this.energyBase];
  }

  private noiseFloor(frame: number): number {
    const from = Math.max(this.energyBase, frame - this.lookahead);
    const to = Math.min(this.framesMeasured - 1, frame + this.lookahead);
    const window = this.energies.slice(from - this.energyBase, to - this.energyBase + 1).sort((a, b) => a - b);
    return window[Math.min(window.length - 1, Math.floor(window.length * this.options.noisePercentile))];
  }

  private decide(out: SpeechSegment[]): void {
    const f = this.framesDecided++;
    const e = this.energy(f);
    const speech = e >= this.options.minLevelDb && e >= this.noiseFloor(f) + this.options.thresholdDb;
    const open = this.open;
    if (!open) {
      if (speech) this.open = { startFrame: f, lastSpeechFrame: f, cut: false };
      return;
    }
    if (speech) open.lastSpeechFrame = f;
    else if (f - open.lastSpeechFrame >= this.silenceFrames) {
      this.close(open.lastSpeechFrame + 1, out);
      return;
    }
    if (f + 1 - open.startFrame >= this.maxFrames) this.split(f, out);
  }

  /** Ends the open segment at `endFrame` (exclusive), with padding after it. */
  private close(endFrame: number, out: SpeechSegment[]): void {
    const open = this.open!;
    this.open = null;
    const speechFrames = open.cut ? endFrame - open.startFrame : open.lastSpeechFrame + 1 - open.startFrame;
    if ((speechFrames * this.frameLen) / this.options.sampleRate < this.options.minSpeechSeconds) return;
    out.push(this.emit(open.startFrame, endFrame, open.cut ? 0 : this.padSamples, this.padSamples));
  }

  /** Cuts the open segment at its quietest frame in the second half; the rest stays open. */
  private split(current: number, out: SpeechSegment[]): void {
    const open = this.open!;
    let cut = current;
    for (let f = open.startFrame + Math.floor(this.maxFrames / 2); f <= current; f++) {
      if (this.energy(f) <= this.energy(cut)) cut = f;
    }
    if (cut <= open.startFrame) cut = current;
    out.push(this.emit(open.startFrame, cut, open.cut ? 0 : this.padSamples, 0));
    this.open = { startFrame: cut, lastSpeechFrame: Math.max(cut, open.lastSpeechFrame), cut: true };
  }

  private emit(startFrame: number, endFrame: number, padBefore: number, padAfter: number): SpeechSegment {
    const rate = this.options.sampleRate;
    const total = this.bufStart + this.bufLen;
    const start = startFrame * this.frameLen;
    const end = Math.min(total, endFrame * this.frameLen);
    const from = Math.max(this.bufStart, start - padBefore);
    const to = Math.min(total, end + padAfter);
    return {
      start: start / rate,
      end: end / rate,
      audioStart: from / rate,
      samples: this.buf.slice(from - this.bufStart, to - this.bufStart),
    };
  }

  /** Drops samples and energies nothing will look at again. */
  private trim(): void {
    const keepFrame = this.open ? this.open.startFrame : this.framesDecided;
    const keepSample = Math.max(this.bufStart, keepFrame * this.frameLen - this.padSamples);
    const drop = keepSample - this.bufStart;
    if (drop > 0 && drop >= this.bufLen / 2) {
      // Shift only when half the buffer is dead, so the copy costs O(1) per sample on average.
      this.buf.copyWithin(0, drop, this.bufLen);
      this.bufLen -= drop;
      this.bufStart = keepSample;
    }
    const keepEnergy = Math.min(keepFrame, this.framesDecided - this.lookahead);
    if (keepEnergy - this.energyBase > 4096) {
      this.energies = this.energies.slice(keepEnergy - this.energyBase);
      this.energyBase = keepEnergy;
    }
  }
}

/** Runs a whole signal through a Segmenter (for tests and short clips). */
export function segmentSamples(samples: Float32Array, options: Partial<SegmenterOptions> = {}): SpeechSegment[] {
  const s = new Segmenter(options);
  return [...s.push(samples), ...s.finish()];
}
