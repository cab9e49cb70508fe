"use client";
/**
 * The track list beside the video: a thumbnail of each object (the frame of its best detection,
 * cropped by the server), class, id, start and end frames, score, a redaction switch and whether
 * it was reviewed. Only the rows in view exist in the DOM (fixed row height), so 2,000 tracks
 * scroll smoothly.
 */
import { memo, useEffect, useRef, useState } from "react";
import { trackScore, type Track } from "@/lib/editor/model";
import { useElementSize } from "./use-element-size";
import { CLASS_LABELS, trackColor } from "./colors";

const ROW_H = 58;

interface Props {
  tracks: readonly Track[];
  selectedId: number | null;
  thumbUrl(t: Track): string;
  onSelect(id: number): void;
  onToggle(id: number): void;
}

export const TrackList = memo(function TrackList({ tracks, selectedId, thumbUrl, onSelect, onToggle }: Props) {
  const boxRef = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const viewH = useElementSize(boxRef, { width: 0, height: 600 }).height;
  // bring the selected track into view
  useEffect(() => {
    if (selectedId == null) return;
    const i = tracks.findIndex((t) => t.id === selectedId);
    const el = boxRef.current!;
    if (i < 0) return;
    if (i * ROW_H < el.scrollTop || (i + 1) * ROW_H > el.scrollTop + el.clientHeight) el.scrollTop = Math.max(0, i * ROW_H - ROW_H);
  }, [selectedId, tracks]);
  const first = Math.max(0, Math.floor(scrollTop / ROW_H) - 4);
  const last = Math.min(tracks.length, Math.ceil((scrollTop + viewH) / ROW_H) + 4);
  return (
    <div ref={boxRef} className="relative h-full overflow-y-auto" onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)} data-testid="track-list">
      <ul style={{ height: tracks.length * ROW_H }} className="relative">
        {tracks.slice(first, last).map((t, j) => (
          <TrackRow key={t.id} track={t} top={(first + j) * ROW_H} selected={t.id === selectedId} thumb={thumbUrl(t)} onSelect={onSelect} onToggle={onToggle} />
        ))}
      </ul>
      {tracks.length === 0 && <p className="px-3 py-6 text-center text-sm text-slate-500">No tracks. Draw a box on the video to add one.</p>}
    </div>
  );
});

const TrackRow = memo(function TrackRow({ track: t, top, selected, thumb, onSelect, onToggle }: { track: Track; top: number; selected: boolean; thumb: string; onSelect(id: number): void; onToggle(id: number): void }) {
  const score = trackScore(t);
  const on = t.enabled !== false;
  return (
    <li
      data-track={t.id}
      style={{ top, height: ROW_H }}
      className={`absolute inset-x-0 flex cursor-pointer items-center gap-2.5 border-b border-slate-800 px-2.5 ${selected ? "bg-slate-700/70" : "hover:bg-slate-800/70"}`}
      onClick={() => onSelect(t.id)}
    >
      <span className="h-10 w-1 shrink-0 rounded" style={{ background: trackColor(t) }} />
      {/* eslint-disable-next-line @next/next/no-img-element */}
      <img src={thumb} alt="" loading="lazy" className={`h-11 w-11 shrink-0 rounded bg-slate-800 object-cover ${on ? "" : "opacity-40 grayscale"}`} />
      <div className="min-w-0 flex-1 text-xs">
        <p className="truncate font-semibold text-slate-100">
          #{t.id} {CLASS_LABELS[t.type]}
          {t.manual && <span className="ml-1.5 rounded bg-pink-500/20 px-1 text-[10px] font-medium text-pink-300">drawn</span>}
          {t.reviewed && <span className="ml-1.5 text-emerald-400" title="reviewed">✓</span>}
        </p>
        <p className="text-slate-400">
          frames {t.firstFrame}–{t.lastFrame}
          {score != null && <span className={score < 0.5 ? "ml-1.5 text-amber-400" : "ml-1.5"}>score {score.toFixed(2)}</span>}
        </p>
      </div>
      <label className="flex shrink-0 items-center" title={on ? "Redacted: click to switch off" : "Not redacted: click to switch on"} onClick={(e) => e.stopPropagation()}>
        <input type="checkbox" className="peer sr-only" checked={on} onChange={() => onToggle(t.id)} aria-label={`Redact track ${t.id}`} />
        <span className="relative h-5 w-9 rounded-full bg-slate-600 transition peer-checked:bg-emerald-500 after:absolute after:top-0.5 after:left-0.5 after:h-4 after:w-4 after:rounded-full after:bg-white after:transition peer-checked:after:translate-x-4" />
      </label>
    </li>
  );
});
