/**
 * Sensors of the analytics pipeline (issue 10; docs/sensors.md): lines and regions drawn on a
 * stream's picture, turning tracked objects into events. Pure: the pipeline feeds each analysed
 * frame's tracks (`update(timeMs, tracks)`) and stores the events returned.
 *
 *   COUNT      a track whose anchor point crosses the line: value 1, direction NORTH when it
 *              crosses from the line's right side to its left (walking the line from its first
 *              point to its second, "left" is on your left), SOUTH the other way
 *   SPEED      two lines `distance` metres apart: a track crossing one, then the other: value =
 *              distance / time in km/h (or m/s); NORTH when it crosses the first line first
 *   FISH       a length measured as the track crosses the line: the box's extent along the line
 *              (its longer side when `along: "longest"`), in metres with `metersPerPixel`, else
 *              pixels; direction as COUNT (the exit side)
 *   PRESENCE   a polygon: an entry gives value 0 (an object is in the region), its exit the seconds
 *              it stayed; records carry active, numObjectsInRegion, object {enteredOn, exitOn,
 *              objectType, uniqueId}, startOn, and on the exit that empties the region stopOn and
 *              timeOn (seconds the region was occupied)
 *   COLLISION  a polygon: while two or more objects are inside at once the sensor is on; when it
 *              goes off, value = the seconds it was on
 * Each sensor counts only the object classes it names (`classes`; empty: all). Coordinates are
 * pixels, or 0-1 of the picture with `relative: true` (scaled by the frame size given to update).
 */
import { z } from "zod";
import { ObscuraError } from "@/lib/errors";
import type { Box } from "@/lib/geometry";
import type { SensorType } from "./events";

export type Pt = [number, number];

const point = z.tuple([z.number(), z.number()], { error: "a point is [x, y]" });
const line = z.tuple([point, point], { error: "a line is [[x1, y1], [x2, y2]]" });
const polygon = z.array(point, { error: "a region is a list of [x, y] points" }).min(3, { error: "a region needs at least 3 points" });
const common = {
  id: z.string({ error: "id must be a string" }).min(1).max(128),
  name: z.string().min(1).max(128).optional(),
  classes: z.array(z.string()).default([]),
  /** Which point of a box is tracked: its centre or the middle of its bottom edge (feet, wheels). */
  anchor: z.enum(["center", "bottom"], { error: "anchor must be center or bottom" }).default("center"),
};

export const sensorSchema = z.discriminatedUnion(
  "type",
  [
    z.strictObject({ ...common, type: z.literal("COUNT"), line }),
    z.strictObject({
      ...common,
      type: z.literal("SPEED"),
      lines: z.tuple([line, line], { error: "lines must be two lines" }),
      distance: z.number({ error: "distance must be the metres between the two lines" }).positive({ error: "distance must be above 0 metres" }),
      unit: z.enum(["km/h", "m/s", "mph"], { error: "unit must be km/h, m/s or mph" }).default("km/h"),
    }),
    z.strictObject({ ...common, type: z.literal("FISH"), line, metersPerPixel: z.number().positive().optional(), along: z.enum(["line", "longest"]).default("longest") }),
    z.strictObject({ ...common, type: z.literal("PRESENCE"), region: polygon }),
    z.strictObject({ ...common, type: z.literal("COLLISION"), region: polygon }),
  ],
  { error: "type must be COUNT, SPEED, FISH, PRESENCE or COLLISION" },
);

export const sensorsFileSchema = z.strictObject({
  workspaceId: z.string().min(1).default("default"),
  deviceId: z.string().min(1),
  streamId: z.string().min(1),
  relative: z.boolean().default(false),
  sensors: z.array(sensorSchema).min(1, { error: "sensors must hold at least one sensor" }),
});

export type SensorDef = z.output<typeof sensorSchema>;
export type SensorsFile = z.output<typeof sensorsFileSchema>;

export function parseSensors(input: unknown, where = "sensorsConfigFile"): SensorsFile {
  const r = sensorsFileSchema.safeParse(input);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new ObscuraError("INVALID_ARGUMENT", `${where}: ${i.path.join(".") || "(file)"}: ${i.message}`, { details: r.error.issues.map((x) => ({ field: x.path.join("."), problem: x.message })) });
  }
  const ids = new Set<string>();
  for (const s of r.data.sensors) {
    if (ids.has(s.id)) throw new ObscuraError("INVALID_ARGUMENT", `${where}: sensor id ${JSON.stringify(s.id)} is used twice`);
    ids.add(s.id);
  }
  return r.data;
}

export interface TrackedObject {
  id: number;
  type: string;
  box: Box;
  score?: number;
}

export interface SensorEvent {
  sensorId: string;
  sensorName: string;
  sensorType: SensorType;
  direction: "NORTH" | "SOUTH" | null;
  objectType: string;
  uniqueId: number | null;
  value: number;
  timeMs: number;
  data: Record<string, unknown>;
}

const cross = (a: Pt, b: Pt, p: Pt) => (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);

/**
 * Whether the move p -> q crosses segment a-b; +1 when it goes from the segment's right to its left
 * (image coordinates, y down: "left" of a->b), -1 the other way, 0 when it does not cross.
 */
export function crossing(a: Pt, b: Pt, p: Pt, q: Pt): -1 | 0 | 1 {
  const d1 = cross(a, b, p);
  const d2 = cross(a, b, q);
  // starting on the line is not a crossing (the move that ended on it was)
  if (d1 === 0) return 0;
  if (d2 !== 0 && Math.sign(d1) === Math.sign(d2)) return 0;
  // p and q lie on both sides (or q on the line): does the move pass within the segment?
  const d3 = cross(p, q, a);
  const d4 = cross(p, q, b);
  if (d3 !== 0 && d4 !== 0 && Math.sign(d3) === Math.sign(d4)) return 0;
  // y points down: a positive cross product is on the right of a -> b as seen on screen
  return d1 > 0 ? 1 : -1;
}

export function inside(poly: readonly Pt[], p: Pt): boolean {
  let c = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i]!;
    const [xj, yj] = poly[j]!;
    if (yi > p[1] !== yj > p[1] && p[0] < ((xj - xi) * (p[1] - yi)) / (yj - yi) + xi) c = !c;
  }
  return c;
}

const anchorOf = (b: Box, anchor: "center" | "bottom"): Pt => [b.x + b.width / 2, anchor === "bottom" ? b.y + b.height : b.y + b.height / 2];

const SPEED_FACTOR = { "km/h": 3.6, "m/s": 1, mph: 2.236936 };

interface PresenceState {
  inside: Map<number, { enteredOn: number; objectType: string }>;
  startOn: number | null;
}

/** The sensors of one stream and their state between frames. */
export class SensorEngine {
  private readonly sensors: SensorDef[];
  private last = new Map<number, { p: Map<string, Pt>; box: Box; type: string }>();
  private speedStarts = new Map<string, { line: 0 | 1; timeMs: number }>();
  private presence = new Map<string, PresenceState>();
  private collision = new Map<string, number | null>();

  constructor(file: SensorsFile, frame: { width: number; height: number }) {
    const k: Pt = file.relative ? [frame.width, frame.height] : [1, 1];
    const s = (p: Pt): Pt => [p[0] * k[0], p[1] * k[1]];
    this.sensors = file.sensors.map((d) => {
      if (d.type === "SPEED") return { ...d, lines: [d.lines[0].map(s), d.lines[1].map(s)] as never };
      if ("line" in d) return { ...d, line: d.line.map(s) as never };
      return { ...d, region: d.region.map(s) };
    });
  }

  /** The sensors' lines and regions in frame pixels (to draw them on saved frames). */
  geometry(): Array<{ name: string; type: SensorDef["type"]; lines: Pt[][]; region: Pt[] | null }> {
    return this.sensors.map((d) => ({
      name: d.name ?? d.id,
      type: d.type,
      lines: d.type === "SPEED" ? (d.lines as unknown as Pt[][]) : "line" in d ? [d.line as unknown as Pt[]] : [],
      region: "region" in d ? (d.region as Pt[]) : null,
    }));
  }

  private counts(d: SensorDef, type: string): boolean {
    return !d.classes.length || d.classes.includes(type);
  }

  /** Events of one frame (time in ms). Tracks absent from a frame keep their last position; `ended` tracks leave regions. */
  update(timeMs: number, tracks: readonly TrackedObject[], ended: readonly number[] = []): SensorEvent[] {
    const out: SensorEvent[] = [];
    const ev = (d: SensorDef, e: Omit<SensorEvent, "sensorId" | "sensorName" | "sensorType">) => out.push({ sensorId: d.id, sensorName: d.name ?? d.id, sensorType: d.type, ...e });
    const now = new Map<number, { p: Map<string, Pt>; box: Box; type: string }>();
    for (const t of tracks) {
      const p = new Map<string, Pt>([
        ["center", anchorOf(t.box, "center")],
        ["bottom", anchorOf(t.box, "bottom")],
      ]);
      now.set(t.id, { p, box: t.box, type: t.type });
      const prev = this.last.get(t.id);
      for (const d of this.sensors) {
        if (!this.counts(d, t.type)) continue;
        const here = p.get(d.anchor)!;
        if (d.type === "COUNT" || d.type === "FISH") {
          if (!prev) continue;
          const c = crossing(d.line[0] as Pt, d.line[1] as Pt, prev.p.get(d.anchor)!, here);
          if (!c) continue;
          const direction = c > 0 ? "NORTH" : "SOUTH";
          if (d.type === "COUNT") ev(d, { direction, objectType: t.type, uniqueId: t.id, value: 1, timeMs, data: {} });
          else {
            const [a, b] = d.line as [Pt, Pt];
            const len = Math.hypot(b[0] - a[0], b[1] - a[1]) || 1;
            const along = d.along === "longest" ? Math.max(t.box.width, t.box.height) : Math.abs(((b[0] - a[0]) / len) * t.box.width) + Math.abs(((b[1] - a[1]) / len) * t.box.height);
            const length = d.metersPerPixel ? along * d.metersPerPixel : along;
            ev(d, { direction, objectType: t.type, uniqueId: t.id, value: length, timeMs, data: { length, unit: d.metersPerPixel ? "m" : "px" } });
          }
        } else if (d.type === "SPEED") {
          if (!prev) continue;
          for (const k of [0, 1] as const) {
            const l = d.lines[k] as [Pt, Pt];
            if (!crossing(l[0], l[1], prev.p.get(d.anchor)!, here)) continue;
            const key = `${d.id}:${t.id}`;
            const started = this.speedStarts.get(key);
            if (started && started.line !== k) {
              const seconds = (timeMs - started.timeMs) / 1000;
              this.speedStarts.delete(key);
              if (seconds > 0) {
                const speed = (d.distance / seconds) * SPEED_FACTOR[d.unit];
                ev(d, { direction: started.line === 0 ? "NORTH" : "SOUTH", objectType: t.type, uniqueId: t.id, value: speed, timeMs, data: { speed, unit: d.unit, seconds } });
              }
            } else this.speedStarts.set(key, { line: k, timeMs });
          }
        }
      }
    }
    for (const [id, v] of this.last) if (!now.has(id) && !ended.includes(id)) now.set(id, v); // unseen this frame: keep
    this.last = now;
    for (const id of ended) this.last.delete(id);
    // regions: who is inside now
    for (const d of this.sensors) {
      if (d.type !== "PRESENCE" && d.type !== "COLLISION") continue;
      const poly = d.region as Pt[];
      const inNow = new Map<number, string>();
      for (const [id, v] of this.last) if (this.counts(d, v.type) && inside(poly, v.p.get(d.anchor)!)) inNow.set(id, v.type);
      if (d.type === "PRESENCE") this.presenceUpdate(d, inNow, timeMs, ev);
      else {
        const on = this.collision.get(d.id) ?? null;
        if (inNow.size >= 2 && on === null) this.collision.set(d.id, timeMs);
        if (inNow.size < 2 && on !== null) {
          this.collision.set(d.id, null);
          ev(d, { direction: null, objectType: [...new Set(inNow.values())].join(",") || "", uniqueId: null, value: (timeMs - on) / 1000, timeMs, data: { startOn: on, stopOn: timeMs } });
        }
      }
    }
    return out;
  }

  private presenceUpdate(d: SensorDef, inNow: Map<number, string>, timeMs: number, ev: (d: SensorDef, e: Omit<SensorEvent, "sensorId" | "sensorName" | "sensorType">) => void): void {
    let st = this.presence.get(d.id);
    if (!st) this.presence.set(d.id, (st = { inside: new Map(), startOn: null }));
    for (const [id, type] of inNow) {
      if (st.inside.has(id)) continue;
      if (st.startOn === null) st.startOn = timeMs;
      st.inside.set(id, { enteredOn: timeMs, objectType: type });
      ev(d, { direction: null, objectType: type, uniqueId: id, value: 0, timeMs, data: { active: true, numObjectsInRegion: st.inside.size, object: { enteredOn: timeMs, objectType: type, uniqueId: id }, startOn: st.startOn } });
    }
    for (const [id, o] of [...st.inside]) {
      if (inNow.has(id)) continue;
      st.inside.delete(id);
      const empty = st.inside.size === 0;
      const startOn = st.startOn!;
      ev(d, {
        direction: null,
        objectType: o.objectType,
        uniqueId: id,
        value: (timeMs - o.enteredOn) / 1000,
        timeMs,
        data: { active: !empty, numObjectsInRegion: st.inside.size, object: { enteredOn: o.enteredOn, exitOn: timeMs, objectType: o.objectType, uniqueId: id }, startOn, ...(empty ? { stopOn: timeMs, timeOn: (timeMs - startOn) / 1000 } : {}) },
      });
      if (empty) st.startOn = null;
    }
  }
}
