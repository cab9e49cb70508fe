/** Colours and labels of the object classes in the editor (overlay, timeline, list). */
import type { Track } from "@/lib/editor/model";

export const CLASS_COLORS: Record<Track["type"], string> = {
  face: "#22c55e",
  head: "#84cc16",
  person: "#06b6d4",
  vehicle: "#3b82f6",
  licensePlate: "#f59e0b",
  id: "#a855f7",
  screen: "#14b8a6",
  document: "#eab308",
};

/** Drawn (manual) tracks: one colour whatever their class, so they stand out from detections. */
export const MANUAL_COLOR = "#ec4899";
export const DISABLED_COLOR = "#94a3b8";

export const CLASS_LABELS: Record<Track["type"], string> = {
  face: "Face",
  head: "Head",
  person: "Person",
  vehicle: "Vehicle",
  licensePlate: "Plate",
  id: "ID card",
  screen: "Screen",
  document: "Document",
};

export const trackColor = (t: Track) => (t.enabled === false ? DISABLED_COLOR : t.manual ? MANUAL_COLOR : CLASS_COLORS[t.type]);
