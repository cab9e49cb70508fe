"use client";
/**
 * The timeline under the video: a frame ruler, one row per track (its span in the class colour,
 * keyframes as ticks, switched-off tracks grey), the playhead. Click or drag to scrub; the wheel
 * scrolls the rows, Shift+wheel pans, Ctrl+wheel (or the buttons) zooms around the pointer. Only
 * the visible rows are painted, on one canvas, so thousands of tracks stay cheap.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import type { Track } from "@/lib/editor/model";
import { trackColor } from "./colors";
import { useElementSize } from "./use-element-size";

const RULER = 22;
const ROW = 12;

interface Props {
  tracks: readonly Track[];
  frameCount: number;
  fps: number;
  frame: number;
  selectedId: number | null;
  onSeek(frame: number): void;
  onSelect(id: number): void;
}

export function Timeline({ tracks, frameCount, fps, frame, selectedId, onSeek, onSelect }: Props) {
  const boxRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const width = useElementSize(boxRef, { width: 800, height: 0 }).width;
  const height = 170;
  const [zoom, setZoom] = useState(1);
  const [start, setStart] = useState(0); // first visible frame
  const [rowTop, setRowTop] = useState(0); // first visible row
  const scrubbing = useRef(false);

  const visibleFrames = Math.max(10, frameCount / zoom);
  const pxPerFrame = width / visibleFrames;
  const maxStart = Math.max(0, frameCount - visibleFrames);
  const s0 = Math.min(start, maxStart);
  const rowsVisible = Math.floor((height - RULER) / ROW);

  // keep the playhead in view while playing
  useEffect(() => {
    if (frame < s0 || frame > s0 + visibleFrames) setStart(Math.max(0, Math.min(maxStart, frame - visibleFrames * 0.1)));
  }, [frame, s0, visibleFrames, maxStart]);

  // keep the selected track's row in view
  useEffect(() => {
    if (selectedId == null) return;
    const i = tracks.findIndex((t) => t.id === selectedId);
    if (i >= 0 && (i < rowTop || i >= rowTop + rowsVisible)) setRowTop(Math.max(0, i - 2));
  }, [selectedId, tracks, rowTop, rowsVisible]);

  useEffect(() => {
    const c = canvasRef.current!;
    const dpr = window.devicePixelRatio || 1;
    c.width = Math.round(width * dpr);
    c.height = Math.round(height * dpr);
    const ctx = c.getContext("2d")!;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = "#0f172a";
    ctx.fillRect(0, 0, width, height);
    const X = (f: number) => (f - s0) * pxPerFrame;
    // ruler: a tick every "nice" number of seconds
    ctx.fillStyle = "#1e293b";
    ctx.fillRect(0, 0, width, RULER);
    const secondsVisible = visibleFrames / fps;
    const step = [0.04, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600].find((s) => secondsVisible / s <= 12) ?? 1200;
    ctx.font = "10px system-ui, sans-serif";
    ctx.fillStyle = "#94a3b8";
    ctx.strokeStyle = "#334155";
    for (let t = Math.ceil((s0 / fps) / step) * step; t * fps <= s0 + visibleFrames; t += step) {
      const x = X(t * fps);
      ctx.beginPath();
      ctx.moveTo(x + 0.5, RULER - 6);
      ctx.lineTo(x + 0.5, height);
      ctx.stroke();
      const m = Math.floor(t / 60);
      const sec = t - m * 60;
      ctx.fillText(`${m}:${sec < 10 ? "0" : ""}${step < 1 ? sec.toFixed(2) : sec.toFixed(0)}`, x + 3, 12);
    }
    // rows
    const last = Math.min(tracks.length, rowTop + rowsVisible);
    for (let i = rowTop; i < last; i++) {
      const t = tracks[i]!;
      const y = RULER + (i - rowTop) * ROW;
      if (t.id === selectedId) {
        ctx.fillStyle = "rgba(255,255,255,0.12)";
        ctx.fillRect(0, y, width, ROW);
      }
      const x0 = X(t.firstFrame);
      const x1 = X(t.lastFrame + 1);
      if (x1 < 0 || x0 > width) continue;
      ctx.fillStyle = trackColor(t);
      ctx.globalAlpha = t.enabled === false ? 0.45 : 0.85;
      ctx.fillRect(Math.max(0, x0), y + 2, Math.max(2, Math.min(width, x1) - Math.max(0, x0)), ROW - 4);
      ctx.globalAlpha = 1;
      if (pxPerFrame * 3 > 1 || t.keyframes.length < 200) {
        ctx.fillStyle = "#fff";
        for (const k of t.keyframes) {
          const kx = X(k.frame + 0.5);
          if (kx < 0 || kx > width) continue;
          if (k.source === "manual") ctx.fillRect(kx - 2, y + 1, 4, ROW - 2);
          else ctx.fillRect(kx - 0.5, y + 3, 1, ROW - 6);
        }
      }
    }
    if (tracks.length > rowsVisible) {
      const h = height - RULER;
      ctx.fillStyle = "rgba(148,163,184,0.5)";
      ctx.fillRect(width - 4, RULER + (h * rowTop) / tracks.length, 3, Math.max(8, (h * rowsVisible) / tracks.length));
    }
    // playhead
    const px = X(frame + 0.5);
    ctx.strokeStyle = "#ef4444";
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(px, 0);
    ctx.lineTo(px, height);
    ctx.stroke();
    ctx.lineWidth = 1;
  }, [tracks, frame, selectedId, width, s0, pxPerFrame, visibleFrames, fps, rowTop, rowsVisible]);

  const frameAt = useCallback((clientX: number) => {
    const r = canvasRef.current!.getBoundingClientRect();
    return Math.max(0, Math.min(frameCount - 1, Math.floor(s0 + (clientX - r.left) / pxPerFrame)));
  }, [s0, pxPerFrame, frameCount]);

  const onDown = (e: React.PointerEvent) => {
    const r = canvasRef.current!.getBoundingClientRect();
    const y = e.clientY - r.top;
    if (y > RULER) {
      const t = tracks[rowTop + Math.floor((y - RULER) / ROW)];
      if (t) onSelect(t.id);
    }
    scrubbing.current = true;
    (e.target as Element).setPointerCapture(e.pointerId);
    onSeek(frameAt(e.clientX));
  };
  const onMove = (e: React.PointerEvent) => {
    if (scrubbing.current) onSeek(frameAt(e.clientX));
  };
  const onUp = () => {
    scrubbing.current = false;
  };
  const zoomBy = (factor: number, atFrame = frame) => {
    const z = Math.max(1, Math.min(Math.max(1, frameCount / 20), zoom * factor));
    const vis = Math.max(10, frameCount / z);
    setZoom(z);
    setStart(Math.max(0, Math.min(frameCount - vis, atFrame - vis / 2)));
  };

  useEffect(() => {
    const c = canvasRef.current!;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      if (e.ctrlKey || e.metaKey) zoomBy(e.deltaY < 0 ? 1.25 : 0.8, frameAt(e.clientX));
      else if (e.shiftKey) setStart((s) => Math.max(0, Math.min(maxStart, s + (e.deltaY / 100) * visibleFrames * 0.1)));
      else setRowTop((r) => Math.max(0, Math.min(Math.max(0, tracks.length - rowsVisible), r + Math.sign(e.deltaY) * 3)));
    };
    c.addEventListener("wheel", onWheel, { passive: false });
    return () => c.removeEventListener("wheel", onWheel);
  });

  return (
    <div className="rounded-lg bg-slate-900 p-2 ring-1 ring-slate-800">
      <div className="mb-1.5 flex items-center gap-2 text-xs text-slate-400">
        <span className="font-medium text-slate-300">Timeline</span>
        <span>{tracks.length} tracks</span>
        <span className="ml-auto">zoom {zoom.toFixed(1)}x</span>
        <button type="button" className="rounded px-2 py-0.5 text-slate-200 ring-1 ring-slate-700 hover:bg-slate-800" onClick={() => zoomBy(0.5)} aria-label="Zoom out">
          −
        </button>
        <button type="button" className="rounded px-2 py-0.5 text-slate-200 ring-1 ring-slate-700 hover:bg-slate-800" onClick={() => zoomBy(2)} aria-label="Zoom in">
          +
        </button>
      </div>
      <div ref={boxRef} className="w-full">
        <canvas
          ref={canvasRef}
          data-testid="timeline"
          style={{ width, height, touchAction: "none", cursor: "col-resize" }}
          onPointerDown={onDown}
          onPointerMove={onMove}
          onPointerUp={onUp}
        />
      </div>
    </div>
  );
}
