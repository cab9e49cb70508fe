/**
 * One stream's state between frames (docs/pipeline.md#output): object identities, plate readings
 * over time, and the update strategy deciding which frames are emitted.
 *
 * Identity: with `useTracker` the tracker (ByteTrack-like, server/tracking) gives ids, `trackerType`
 * choosing its settings; without it a box is the object of the previous frame it overlaps most
 * (IoU >= 0.3, same metaclass), which holds for cars that move less than their size between
 * analysed frames. A plate whose string equals one seen within `lptStringMergeWindow` frames is that
 * plate again (a plate lost for a few frames keeps its id).
 *
 * Plate strings over time: every reading of a plate votes for its string with its score; the plate
 * reports the string with most votes. `lptStabilizationDelay` N: a plate is stable once read in N
 * frames; strategy `remove` leaves unstable plates out of the output, `update` reports them at once
 * and updates the string as votes come in.
 *
 * Update strategy (which frames become output):
 *   - updateOnStart: the first analysed frame is emitted;
 *   - updateOnlyOnEvents: only frames with sensor events (nothing else counts);
 *   - otherwise a frame is emitted when updateOnlyOnChange is false, or when something changed
 *     since the last emitted frame (an object came or went, an attribute's value changed), or a
 *     metaclass of updateOnMetaclassCountChange changed its count, or updateMinFrequencyMs passed
 *     since the last emitted frame;
 *   - a frame with no objects and no events is dropped unless updateAllowEmptyJSON.
 */
import { type Box, iou } from "@/lib/geometry";
import { Tracker, trackerParams, trackingProfile } from "../tracking";
import type { Detection } from "../vision/types";
import type { Analysis } from "../vehicle/analyze";
import type { PipelineConfig } from "./config";
import type { SensorEvent } from "./sensors";

export const ENGINE_VERSION = "obscura-analytics-1.0";

/** The spec's metaclasses, and ours: people (when enabledClasses has person). */
type MetaClass = "vehicles" | "licensePlates" | "people";

interface Attr {
  value: unknown;
  attributeScore: number;
  detectionScore: number;
}

interface ObjectRecord {
  id: string;
  num: number;
  metaClass: MetaClass;
  firstFrameTimestamp: number;
  bestDetectionTimestamp: number;
  bestScore: number;
  lastFrame: number;
  framesSeen: number;
  /** plates: votes per string */
  votes: Map<string, number>;
  /** plates: the region reported with each string */
  regions: Map<string, { value: string; score: number }>;
  box: Box;
  score: number;
  attributes: Record<string, Attr>;
  vehicleClass?: string;
  linkTo?: string;
}

export interface FrameObjectJson {
  attributes: Record<string, Attr & { updated: boolean }>;
  firstFrameTimestamp: number;
  bestDetectionTimestamp: number;
  class: "licensePlate" | "car" | "person";
  vehicleClass?: string;
  box: { height: number; width: number; x: number; y: number };
  detectionScore: number;
  updated: boolean;
  links: Array<{ metaClass: MetaClass; id: string }>;
}

export interface FrameOutput {
  apiVersion: { major: number; minor: number };
  frameDimensions: { w: number; h: number };
  frameSource: string;
  sourceId: string;
  frameId: string;
  frameTimestamp: number;
  analyticsTimestamp: number;
  metaClasses: { licensePlates: Record<string, FrameObjectJson>; vehicles: Record<string, FrameObjectJson>; people?: Record<string, FrameObjectJson> };
  sensorEvents?: SensorEvent[] & unknown[];
  links: Array<{ type: string; path: string; format: string }>;
  engine_version: string;
  time_analytics_start: number;
  time_analytics_complete: number;
  performance?: Record<string, unknown>;
}

const r3 = (v: number) => Math.round(v * 1000) / 1000;
const jsonBox = (b: Box) => ({ height: Math.round(b.height), width: Math.round(b.width), x: Math.round(b.x), y: Math.round(b.y) });

/** trackerType -> the tracker's profile (docs/pipeline.md#tracker). */
const TRACKER_PROFILE: Record<PipelineConfig["trackerType"], string> = {
  cpuBest: "gen6_highMotion",
  cpuFast: "gen6_standard",
  cpuFaster: "gen6_standard",
  cpuFastest: "gen5_standard",
};

export interface TrackedFrame {
  /** Vehicle boxes with ids (for sensors and extension modules). */
  objects: Array<{ id: string; num: number; metaClass: MetaClass; type: string; box: Box; score: number }>;
  /** Track numbers that ended this frame (they leave regions). */
  ended: number[];
}

type Boxed = "vehicles" | "people";

export class StreamState {
  private vehicles = new Map<string, ObjectRecord>();
  private people = new Map<string, ObjectRecord>();
  private plates = new Map<string, ObjectRecord>();
  /** Vehicles and people share one numbering (their numbers are the sensors' uniqueId); plates have their own. */
  private nextNum = { objects: 1, licensePlates: 1 };
  private tracker: Tracker | null = null;
  /** tracker id -> record id */
  private trackId = new Map<number, string>();
  private lastEmitted: { ids: Map<string, string>; counts: Record<MetaClass, number>; timeMs: number } | null = null;
  private tick = 0;

  constructor(
    private readonly c: PipelineConfig,
    /** Analysed frames per second (the source's, after fpsLimit). */
    public fps: number,
  ) {
    if (c.useTracker) this.tracker = this.newTracker();
  }

  private newTracker(): Tracker {
    const profile = trackingProfile(TRACKER_PROFILE[this.c.trackerType], Math.max(1, this.fps));
    return new Tracker(trackerParams({ ...profile, detectionStride: 1, headFrames: 0 }, { objects: this.c.detectionMinConfidence, inner: this.c.detectionMinConfidence }));
  }

  /** Forgets everything (FolderWatch with updateResetStateOnNewInput: each input is a new stream). */
  reset(): void {
    this.vehicles.clear();
    this.people.clear();
    this.plates.clear();
    this.nextNum = { objects: 1, licensePlates: 1 };
    this.trackId.clear();
    this.lastEmitted = null;
    if (this.c.useTracker) this.tracker = this.newTracker();
  }

  private newRecord(metaClass: MetaClass, frameMs: number, box: Box, score: number): ObjectRecord {
    const num = metaClass === "licensePlates" ? this.nextNum.licensePlates++ : this.nextNum.objects++;
    const id = `${metaClass === "vehicles" ? "vehicle" : metaClass === "people" ? "person" : "lp"}-${num}`;
    return { id, num, metaClass, firstFrameTimestamp: frameMs, bestDetectionTimestamp: frameMs, bestScore: score, lastFrame: -1, framesSeen: 0, votes: new Map(), regions: new Map(), box, score, attributes: {} };
  }

  private store(m: Boxed): Map<string, ObjectRecord> {
    return m === "vehicles" ? this.vehicles : this.people;
  }

  /**
   * Identities of this frame's vehicles and people: record ids in input order, and the numbers of
   * objects that ended (they leave the sensors' regions).
   */
  private identify(tick: number, frameMs: number, lists: Record<Boxed, Array<{ box: Box; score: number }>>): { ids: Record<Boxed, string[]>; ended: number[] } {
    const ids: Record<Boxed, string[]> = { vehicles: [], people: [] };
    const ended: number[] = [];
    const kinds: Boxed[] = ["vehicles", "people"];
    if (this.tracker) {
      const dets: Detection[] = kinds.flatMap((m) => lists[m].map((o) => ({ type: m === "vehicles" ? ("vehicle" as const) : ("person" as const), score: o.score, box: o.box })));
      const live = this.tracker.update(tick, dets);
      const liveIds = new Set(live.map((t) => t.id));
      for (const [tid, rid] of this.trackId) {
        if (liveIds.has(tid)) continue;
        const r = this.vehicles.get(rid) ?? this.people.get(rid);
        if (r) ended.push(r.num);
        this.trackId.delete(tid);
      }
      for (const m of kinds) {
        const type = m === "vehicles" ? "vehicle" : "person";
        const matched = new Map<number, number>();
        for (const t of live) if (t.type === type && !t.predicted && t.frame === tick) matched.set(this.matchIndex(t.box, lists[m].map((o) => o.box)), t.id);
        lists[m].forEach((o, i) => {
          const tid = matched.get(i);
          let key = tid !== undefined ? this.trackId.get(tid) : undefined;
          if (!key) {
            const r = this.newRecord(m, frameMs, o.box, o.score);
            this.store(m).set(r.id, r);
            key = r.id;
            if (tid !== undefined) this.trackId.set(tid, key);
          }
          ids[m].push(key);
        });
      }
      return { ids, ended };
    }
    for (const m of kinds) {
      // an object missed by the detector in a frame or two keeps its id (memory: half a second)
      const prev = [...this.store(m).values()].filter((r) => tick - r.lastFrame <= this.memory());
      const taken = new Set<string>();
      for (const o of lists[m]) {
        let best: ObjectRecord | null = null;
        let bestIou = 0.3;
        for (const r of prev) {
          if (taken.has(r.id)) continue;
          const v = iou(r.box, o.box);
          if (v >= bestIou) {
            bestIou = v;
            best = r;
          }
        }
        if (!best) {
          best = this.newRecord(m, frameMs, o.box, o.score);
          this.store(m).set(best.id, best);
        }
        taken.add(best.id);
        ids[m].push(best.id);
      }
      for (const r of prev) if (!taken.has(r.id) && tick - r.lastFrame >= this.memory()) ended.push(r.num);
    }
    return { ids, ended };
  }

  /** Gives this frame's analysis identities; returns the objects seen now. */
  update(a: Analysis, frameMs: number): TrackedFrame {
    const tick = this.tick++;
    const people = a.people ?? [];
    const { ids, ended } = this.identify(tick, frameMs, { vehicles: a.vehicles, people });
    const vIds = ids.vehicles;
    people.forEach((o, i) => {
      const r = this.people.get(ids.people[i]!)!;
      this.seen(r, tick, frameMs, o.box, o.score);
      r.vehicleClass = "person";
    });
    a.vehicles.forEach((v, i) => {
      const r = this.vehicles.get(vIds[i]!)!;
      this.seen(r, tick, frameMs, v.box, v.score);
      r.vehicleClass = v.vehicleClass;
      const mm = v.makeModel;
      const gen = mm.generation ? `${mm.generation.start}-${mm.generation.end}` : "";
      const value = this.c.splitMakeModel ? { make: mm.make, model: mm.model, generation: gen } : [mm.make, mm.model, gen].filter(Boolean).join(" ");
      r.attributes.vehicleType = { value, attributeScore: r3(mm.score), detectionScore: r3(v.score) };
      r.attributes.color = { value: v.color.value, attributeScore: r3(v.color.score), detectionScore: r3(v.score) };
      r.linkTo = undefined;
    });
    // --- plates: the previous frame's plate it overlaps, else a plate with the same string within the merge window
    const pIds: string[] = [];
    const prevPlates = [...this.plates.values()];
    const taken = new Set<string>();
    for (const p of a.plates) {
      let best: ObjectRecord | null = null;
      let bestIou = 0.3;
      for (const r of prevPlates) {
        if (taken.has(r.id) || r.lastFrame !== tick - 1) continue;
        const o = iou(r.box, p.box);
        if (o >= bestIou) {
          bestIou = o;
          best = r;
        }
      }
      if (!best && p.text) best = prevPlates.find((r) => !taken.has(r.id) && r.votes.has(p.text) && tick - r.lastFrame <= this.c.lptStringMergeWindow) ?? null;
      if (!best) {
        best = this.newRecord("licensePlates", frameMs, p.box, p.detectionScore);
        this.plates.set(best.id, best);
      }
      taken.add(best.id);
      pIds.push(best.id);
      this.seen(best, tick, frameMs, p.box, p.detectionScore);
      if (p.text) {
        best.votes.set(p.text, (best.votes.get(p.text) ?? 0) + Math.max(1e-3, p.textScore));
        best.regions.set(p.text, { value: p.region, score: p.regionScore });
      }
      const [text, votes] = [...best.votes].sort((x, y) => y[1] - x[1])[0] ?? ["", 0];
      const total = [...best.votes.values()].reduce((s, v) => s + v, 0) || 1;
      const stringScore = best.votes.size > 1 ? (votes / total) * p.textScore : p.textScore;
      const region = best.regions.get(text) ?? { value: p.region, score: p.regionScore };
      best.attributes.lpString = { value: text, attributeScore: r3(stringScore), detectionScore: r3(p.detectionScore) };
      best.attributes.lpRegion = { value: region.value, attributeScore: r3(region.score), detectionScore: r3(p.detectionScore) };
      best.linkTo = p.vehicle !== null ? vIds[p.vehicle] : undefined;
      if (best.linkTo) this.vehicles.get(best.linkTo)!.linkTo = best.id;
    }
    // forget what is gone for good
    const tracked = new Set(this.trackId.values());
    for (const store of [this.vehicles, this.people]) {
      for (const [id, r] of store) if (this.tracker ? tick - r.lastFrame > 1 && !tracked.has(id) : tick - r.lastFrame >= this.memory()) store.delete(id);
    }
    for (const [id, r] of this.plates) if (tick - r.lastFrame > Math.max(1, this.c.lptStringMergeWindow)) this.plates.delete(id);
    return {
      objects: [
        ...a.vehicles.map((v, i) => {
          const r = this.vehicles.get(vIds[i]!)!;
          return { id: r.id, num: r.num, metaClass: "vehicles" as const, type: v.vehicleClass as string, box: v.box, score: v.score };
        }),
        ...people.map((o, i) => {
          const r = this.people.get(ids.people[i]!)!;
          return { id: r.id, num: r.num, metaClass: "people" as const, type: "person", box: o.box, score: o.score };
        }),
      ],
      ended,
    };
  }

  /** Frames an unseen object keeps its id without the tracker. */
  private memory(): number {
    return Math.max(2, Math.round(this.fps / 2));
  }

  private matchIndex(box: Box, boxes: Box[]): number {
    let best = -1;
    let bestIou = 0;
    boxes.forEach((b, i) => {
      const o = iou(b, box);
      if (o > bestIou) {
        bestIou = o;
        best = i;
      }
    });
    return best;
  }

  private seen(r: ObjectRecord, tick: number, frameMs: number, box: Box, score: number): void {
    if (r.lastFrame !== tick) r.framesSeen++;
    r.lastFrame = tick;
    r.box = box;
    r.score = score;
    if (score > r.bestScore) {
      r.bestScore = score;
      r.bestDetectionTimestamp = frameMs;
    }
  }

  private reported(): ObjectRecord[] {
    const now = this.tick - 1;
    const v = [...this.vehicles.values()].filter((r) => r.lastFrame === now);
    const people = [...this.people.values()].filter((r) => r.lastFrame === now);
    const p = [...this.plates.values()].filter((r) => r.lastFrame === now && (this.c.lptStabilizationStrategy === "update" || r.framesSeen >= this.c.lptStabilizationDelay));
    return [...v, ...people, ...p];
  }

  /**
   * The output of the frame just updated, or null when the update strategy skips it. `base` holds
   * the frame fields (dimensions, source, timestamps); `events` the frame's sensor events.
   */
  output(base: Pick<FrameOutput, "frameDimensions" | "frameSource" | "sourceId" | "frameId" | "frameTimestamp" | "analyticsTimestamp" | "time_analytics_start" | "time_analytics_complete">, events: unknown[] | null, frameMs: number): { output: FrameOutput; emit: boolean } {
    const objs = this.reported();
    const shown = new Set(objs.map((o) => o.id));
    const values = new Map(objs.map((o) => [o.id, JSON.stringify(Object.fromEntries(Object.entries(o.attributes).map(([k, a]) => [k, a.value])))]));
    const last = this.lastEmitted;
    const count = (m: MetaClass) => objs.filter((o) => o.metaClass === m).length;
    const counts: Record<MetaClass, number> = { vehicles: count("vehicles"), licensePlates: count("licensePlates"), people: count("people") };
    const metaClasses: Required<FrameOutput["metaClasses"]> = { licensePlates: {}, vehicles: {}, people: {} };
    for (const o of objs) {
      const lastValues = last?.ids.get(o.id);
      const prevAttrs = lastValues ? (JSON.parse(lastValues) as Record<string, unknown>) : null;
      const attributes = Object.fromEntries(Object.entries(o.attributes).map(([k, a]) => [k, { ...a, updated: !prevAttrs || JSON.stringify(prevAttrs[k]) !== JSON.stringify(a.value) }]));
      const linked = o.linkTo && shown.has(o.linkTo) ? [{ metaClass: (o.metaClass === "vehicles" ? "licensePlates" : "vehicles") as MetaClass, id: o.linkTo }] : [];
      metaClasses[o.metaClass][o.id] = {
        attributes,
        firstFrameTimestamp: o.firstFrameTimestamp,
        bestDetectionTimestamp: o.bestDetectionTimestamp,
        class: o.metaClass === "vehicles" ? "car" : o.metaClass === "people" ? "person" : "licensePlate",
        ...(o.vehicleClass && o.metaClass === "vehicles" ? { vehicleClass: o.vehicleClass } : {}),
        box: jsonBox(o.box),
        detectionScore: r3(o.score),
        updated: !lastValues || Object.values(attributes).some((a) => a.updated),
        links: linked,
      };
    }
    const output: FrameOutput = {
      apiVersion: { major: 1, minor: 1 },
      ...base,
      metaClasses: this.c.enabledClasses.includes("person" as never) ? metaClasses : { licensePlates: metaClasses.licensePlates, vehicles: metaClasses.vehicles },
      ...(events ? { sensorEvents: events as never } : {}),
      links: [],
      engine_version: ENGINE_VERSION,
    };
    const c = this.c;
    const hasEvents = !!events?.length;
    let emit: boolean;
    if (c.updateOnlyOnEvents) emit = hasEvents;
    else if (!last) emit = c.updateOnStart || !c.updateOnlyOnChange || objs.length > 0;
    else {
      const changed = objs.some((o) => last.ids.get(o.id) !== values.get(o.id)) || [...last.ids.keys()].some((id) => !shown.has(id));
      const which = c.updateOnMetaclassCountChange.includes("all") ? (["vehicles", "licensePlates", "people"] as const) : (c.updateOnMetaclassCountChange as MetaClass[]);
      const countChanged = which.some((m) => counts[m] !== last.counts[m]);
      const byTime = c.updateMinFrequencyMs > 0 && frameMs - last.timeMs >= c.updateMinFrequencyMs;
      emit = !c.updateOnlyOnChange || changed || countChanged || byTime || hasEvents;
    }
    if (emit && !c.updateAllowEmptyJSON && objs.length === 0 && !hasEvents && !(last === null && c.updateOnStart)) emit = false;
    if (emit || !last) this.lastEmitted = { ids: values, counts, timeMs: emit || !last ? frameMs : last.timeMs };
    return { output, emit };
  }
}
