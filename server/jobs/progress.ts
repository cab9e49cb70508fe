/**
 * Progress over weighted stages: a pipeline declares its stages up front (fetch, probe, hash,
 * render, upload ...) with weights, then reports a fraction within the current stage; the
 * operation's progressPercent is the weighted sum, never going backwards. Pure.
 */
export type ProgressSink = (percent: number, stage: string) => void;

export class StagedProgress {
  private readonly starts = new Map<string, { start: number; weight: number }>();
  private current: string | null = null;
  private last = 0;

  constructor(stages: ReadonlyArray<readonly [string, number]>, private readonly sink: ProgressSink) {
    const total = stages.reduce((s, [, w]) => s + w, 0) || 1;
    let acc = 0;
    for (const [name, w] of stages) {
      this.starts.set(name, { start: (acc / total) * 100, weight: (w / total) * 100 });
      acc += w;
    }
  }

  /** Enters `stage` (unknown stages keep the current percent). */
  stage(name: string): void {
    this.current = name;
    this.emit(this.starts.get(name)?.start ?? this.last);
  }

  /** Reports `fraction` (0..1) of the current stage. */
  update(fraction: number): void {
    const s = this.current ? this.starts.get(this.current) : undefined;
    if (!s) return;
    const f = Math.max(0, Math.min(1, Number.isFinite(fraction) ? fraction : 0));
    this.emit(s.start + s.weight * f);
  }

  get percent(): number {
    return this.last;
  }

  private emit(p: number): void {
    if (p < this.last) p = this.last;
    this.last = p;
    this.sink(p, this.current ?? "");
  }
}

/** Calls `fn` at most once per `intervalMs` (the first call and the forced ones always pass). */
export function throttle<A extends unknown[]>(intervalMs: number, fn: (...args: A) => void): ((...args: A) => void) & { force: (...args: A) => void } {
  let lastAt = -Infinity;
  const t = (...args: A) => {
    const now = Date.now();
    if (now - lastAt < intervalMs) return;
    lastAt = now;
    fn(...args);
  };
  t.force = (...args: A) => {
    lastAt = Date.now();
    fn(...args);
  };
  return t;
}
