/**
 * Merging a new detection run into a session's tracks without losing a reviewer's work.
 *
 * Re-running a feature (say FACE_DETECTION with another profile) replaces the tracks of that
 * feature's types, except the ones a reviewer touched:
 * - drawn tracks (`manual: true`) and tracks with a moved or added keyframe (`source: "manual"`)
 *   stay as they are; new tracks over the same object stay too (two boxes over one face are
 *   harmless, a face lost because an old box was thrown away is our worst bug);
 * - tracks switched off (`enabled: false`) carry that decision to the new tracks of the same
 *   object (same type, boxes overlapping over most of their shared frames): the new track comes in
 *   switched off and replaces the old one unless the old one also has manual keyframes (then both
 *   stay). A switched-off track no new track matches stays as it was.
 * Tracks of types not re-detected are kept; kept tracks keep their ids; new ones get ids above
 * every earlier one, so an id an editor or a client holds never names another object.
 */
import { iou } from "@/lib/geometry";
import { boxAt, type Track } from "../tracking";
import type { ObjectType } from "../vision/types";

/** Mean IoU over the shared frames at or above which two tracks are taken as one object. */
export const SAME_OBJECT_IOU = 0.3;
/** ...and the share of the new track's frames the old one must cover. */
export const SAME_OBJECT_SPAN = 0.5;

export function reviewed(t: Track): boolean {
  return t.manual === true || t.enabled === false || t.keyframes.some((k) => k.source === "manual");
}

const hasManualEdits = (t: Track) => t.manual === true || t.keyframes.some((k) => k.source === "manual");

/** Whether `fresh` follows the same object as `old`: sampled every few frames over their overlap. */
export function sameObject(old: Track, fresh: Track): boolean {
  if (old.type !== fresh.type) return false;
  const from = Math.max(old.firstFrame, fresh.firstFrame);
  const to = Math.min(old.lastFrame, fresh.lastFrame);
  const span = fresh.lastFrame - fresh.firstFrame + 1;
  if (to < from || (to - from + 1) / span < SAME_OBJECT_SPAN) return false;
  const step = Math.max(1, Math.floor((to - from) / 24));
  let sum = 0;
  let n = 0;
  for (let f = from; f <= to; f += step) {
    const a = boxAt(old, f);
    const b = boxAt(fresh, f);
    if (a && b) {
      sum += iou(a, b);
      n++;
    }
  }
  return n > 0 && sum / n >= SAME_OBJECT_IOU;
}

/**
 * The session's tracks after a detection run over `types`: `previous` as stored, `fresh` as the
 * detectors returned them (their ids are replaced).
 */
export function mergeTracks(previous: readonly Track[], types: ReadonlySet<ObjectType>, fresh: readonly Track[]): Track[] {
  const kept = previous.filter((t) => !types.has(t.type) || reviewed(t));
  const switchedOff = kept.filter((t) => types.has(t.type) && t.enabled === false);
  const superseded = new Set<Track>();
  let next = previous.reduce((m, t) => Math.max(m, t.id), 0); // ids are never reused
  const added = fresh.map((t) => {
    const off = switchedOff.find((o) => sameObject(o, t));
    const track: Track = { ...t, id: ++next };
    if (off) {
      track.enabled = false;
      if (off.label && !track.label) track.label = off.label;
      if (!hasManualEdits(off)) superseded.add(off);
    }
    return track;
  });
  return [...kept.filter((t) => !superseded.has(t)), ...added];
}
