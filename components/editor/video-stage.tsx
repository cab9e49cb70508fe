"use client";
/**
 * The video with its overlay: a video.js player (our own transport controls sit below it), a
 * preview canvas that paints the chosen redaction style over the boxes, and a Konva stage that
 * draws every active track's box at the current frame and lets the reviewer select, move, resize
 * and draw boxes. The current frame comes from requestVideoFrameCallback (the frame actually
 * presented), so boxes are frame-accurate while playing and after seeking.
 */
import { forwardRef, useCallback, useEffect, useImperativeHandle, useMemo, useRef, useState } from "react";
import videojs from "video.js";
import type Player from "video.js/dist/types/player";
import { Layer, Rect, Shape, Stage, Transformer } from "react-konva";
import type Konva from "konva";
import { activeAt, boxAt, clampBox, frameOf, scoreAt, timeOf, type Box, type Track } from "@/lib/editor/model";
import { CLASS_LABELS, trackColor } from "./colors";
import { useElementSize } from "./use-element-size";

export interface PreviewStyle {
  on: boolean;
  style: "MOSAIC" | "PIXELATE" | "BLUR" | "FILL" | "OUTLINE" | "SMART";
  shape: "RECTANGLE" | "ELLIPSE";
  color: string;
}

export interface VideoStageHandle {
  seek(frame: number): void;
  play(): void;
  pause(): void;
  toggle(): void;
  isPlaying(): boolean;
}

interface Props {
  src: string;
  fps: number;
  frameCount: number;
  /** Box space: the session's frame size (display pixels). */
  width: number;
  height: number;
  tracks: readonly Track[];
  frame: number;
  selectedId: number | null;
  tool: "select" | "draw";
  preview: PreviewStyle;
  /** Track following the pointer while the video plays (live tracking), if any. */
  liveTrackId: number | null;
  maxHeight: number;
  /** WebVTT captions (the transcript), when the video has one. */
  captionsSrc?: string | null;
  onFrame(frame: number): void;
  onPlaying(playing: boolean): void;
  onSelect(id: number | null): void;
  onBoxChange(id: number, box: Box): void;
  onDrawn(box: Box): void;
  onLive(id: number, frame: number, box: Box): void;
  onReady(): void;
}

export const VideoStage = forwardRef<VideoStageHandle, Props>(function VideoStage(p, ref) {
  const shellRef = useRef<HTMLDivElement>(null);
  const holderRef = useRef<HTMLDivElement>(null);
  const playerRef = useRef<Player | null>(null);
  const videoRef = useRef<HTMLVideoElement | null>(null);
  const previewRef = useRef<HTMLCanvasElement>(null);
  const trRef = useRef<Konva.Transformer>(null);
  const layerRef = useRef<Konva.Layer>(null);
  const displayW = useElementSize(shellRef).width;
  const cb = useRef(p);
  cb.current = p;
  /** The frame a paused user asked for last (null while playing): the counter never goes back behind it. */
  const wanted = useRef<number | null>(null);
  const reseeks = useRef(0);

  const aspect = p.width / p.height;
  const dw = Math.max(1, Math.min(displayW, Math.floor(p.maxHeight * aspect)));
  const dh = Math.round(dw / aspect);
  const scale = dw / p.width;

  // the player, created once (video.js owns its element, so React never renders it)
  useEffect(() => {
    const el = document.createElement("video-js");
    el.setAttribute("playsinline", "");
    holderRef.current!.appendChild(el);
    const player = videojs(el, { controls: false, preload: "auto", muted: false, loop: false, bigPlayButton: false, loadingSpinner: true, sources: [{ src: p.src, type: "video/mp4" }] });
    playerRef.current = player;
    let handle = 0;
    let video: HTMLVideoElement | null = null;
    player.ready(() => {
      video = player.el().querySelector("video");
      if (!video) return;
      videoRef.current = video;
      const v = video;
      const onVideoFrame = (_now: number, meta: VideoFrameCallbackMetadata) => {
        const got = Math.min(cb.current.frameCount - 1, frameOf(meta.mediaTime, cb.current.fps));
        const want = wanted.current;
        if (v.paused && want !== null && got !== want) {
          // a picture from before the seek the user asked for (a seek still running, or one the
          // video dropped because it came before the video had loaded): keep the asked-for frame
          // and ask the video again once (never taking the counter back: that lost F presses)
          if (!v.seeking && reseeks.current++ < 1) v.currentTime = timeOf(want, cb.current.fps);
        } else if (!v.seeking) cb.current.onFrame(got);
        paintPreview.current();
        handle = v.requestVideoFrameCallback(onVideoFrame);
      };
      v.addEventListener("loadeddata", () => paintPreview.current());
      v.addEventListener("play", () => (wanted.current = null));
      v.addEventListener("seeked", () => paintPreview.current());
      handle = v.requestVideoFrameCallback(onVideoFrame);
    });
    player.on("play", () => cb.current.onPlaying(true));
    player.on("pause", () => cb.current.onPlaying(false));
    player.on("ended", () => cb.current.onPlaying(false));
    player.one("loadeddata", () => cb.current.onReady());
    return () => {
      video?.cancelVideoFrameCallback(handle);
      player.dispose();
      playerRef.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [p.src]);

  useEffect(() => {
    playerRef.current?.dimensions(dw, dh);
  }, [dw, dh]);

  // the transcript as captions
  useEffect(() => {
    const player = playerRef.current;
    if (!player || !p.captionsSrc) return;
    const el = player.addRemoteTextTrack({ kind: "captions", src: p.captionsSrc, label: "Transcript", default: true }, false);
    return () => {
      if (el) player.removeRemoteTextTrack(el as unknown as Parameters<Player["removeRemoteTextTrack"]>[0]);
    };
  }, [p.captionsSrc]);

  useImperativeHandle(
    ref,
    () => ({
      seek(frame: number) {
        const f = Math.max(0, Math.min(cb.current.frameCount - 1, frame));
        wanted.current = playerRef.current?.paused() === false ? null : f;
        reseeks.current = 0;
        cb.current.onFrame(f); // draw the new frame's boxes at once; the video catches up
        playerRef.current?.currentTime(timeOf(f, cb.current.fps));
      },
      play: () => void playerRef.current?.play(),
      pause: () => playerRef.current?.pause(),
      toggle() {
        const pl = playerRef.current;
        if (!pl) return;
        if (pl.paused()) void pl.play();
        else pl.pause();
      },
      isPlaying: () => !!playerRef.current && !playerRef.current.paused(),
    }),
    [],
  );

  const active = useMemo(() => activeAt(p.tracks, p.frame), [p.tracks, p.frame]);

  // the style preview, painted from the video frame under each box: when the boxes or the style
  // change, and whenever the video presents a frame (after a seek the picture arrives later)
  const paintPreview = useRef<() => void>(() => undefined);
  paintPreview.current = () => {
    const c = previewRef.current;
    const video = videoRef.current;
    if (!c) return;
    const ctx = c.getContext("2d")!;
    ctx.clearRect(0, 0, c.width, c.height);
    if (!p.preview.on || !video || video.readyState < 2) return;
    const vx = video.videoWidth / p.width;
    const vy = video.videoHeight / p.height;
    const small = document.createElement("canvas");
    for (const t of active) {
      if (t.enabled === false) continue;
      const b = boxAt(t, p.frame)!;
      const [x, y, w, h] = [b.x * scale, b.y * scale, b.width * scale, b.height * scale];
      ctx.save();
      ctx.beginPath();
      if (p.preview.shape === "ELLIPSE") ctx.ellipse(x + w / 2, y + h / 2, w / 2, h / 2, 0, 0, Math.PI * 2);
      else ctx.rect(x, y, w, h);
      ctx.clip();
      const style = p.preview.style;
      if (style === "FILL") {
        ctx.fillStyle = p.preview.color;
        ctx.fill();
      } else if (style === "OUTLINE") {
        ctx.lineWidth = 3;
        ctx.strokeStyle = p.preview.color;
        ctx.stroke();
      } else if (style === "BLUR" || style === "SMART") {
        ctx.filter = `blur(${Math.max(4, Math.min(w, h) / 8)}px)`;
        ctx.drawImage(video, 0, 0, video.videoWidth, video.videoHeight, 0, 0, c.width, c.height);
      } else {
        const blocks = style === "MOSAIC" ? 10 : 16;
        small.width = Math.max(1, Math.round(w / blocks));
        small.height = Math.max(1, Math.round(h / blocks));
        const sctx = small.getContext("2d")!;
        sctx.drawImage(video, b.x * vx, b.y * vy, b.width * vx, b.height * vy, 0, 0, small.width, small.height);
        ctx.imageSmoothingEnabled = false;
        ctx.drawImage(small, 0, 0, small.width, small.height, x, y, w, h);
      }
      ctx.restore();
    }
  };
  useEffect(() => paintPreview.current(), [active, p.frame, p.preview, scale, p.width, p.height, dw, dh]);

  // the transformer follows the selected box
  useEffect(() => {
    const tr = trRef.current;
    if (!tr) return;
    const node = p.selectedId != null ? layerRef.current?.findOne(`#box-${p.selectedId}`) : null;
    tr.nodes(node ? [node] : []);
    tr.getLayer()?.batchDraw();
  }, [p.selectedId, active]);

  // drawing a new box
  const [draft, setDraft] = useState<{ x0: number; y0: number; x1: number; y1: number } | null>(null);
  const dragOrigin = useRef<{ id: number; x: number; y: number; width: number; height: number } | null>(null);
  const cancelled = useRef(false);
  const livePointer = useRef<{ x: number; y: number } | null>(null);

  // Esc cancels a drag or resize in progress (the box goes back; nothing is recorded)
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      const o = dragOrigin.current;
      if (o) {
        cancelled.current = true;
        const node = layerRef.current?.findOne<Konva.Rect>(`#box-${o.id}`);
        if (node) {
          node.stopDrag();
          trRef.current?.stopTransform();
          node.setAttrs({ x: o.x, y: o.y, width: o.width, height: o.height, scaleX: 1, scaleY: 1 });
          node.getLayer()?.batchDraw();
        }
        dragOrigin.current = null;
        e.stopPropagation();
      }
      if (draft) setDraft(null);
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, [draft]);

  const toBox = (node: Konva.Node): Box =>
    clampBox({ x: node.x() / scale, y: node.y() / scale, width: (node.width() * node.scaleX()) / scale, height: (node.height() * node.scaleY()) / scale }, p.width, p.height);

  const begin = (id: number, node: Konva.Node) => {
    cancelled.current = false;
    dragOrigin.current = { id, x: node.x(), y: node.y(), width: node.width(), height: node.height() };
  };
  const end = (id: number, node: Konva.Node) => {
    const wasCancelled = cancelled.current;
    cancelled.current = false;
    dragOrigin.current = null;
    if (wasCancelled) return;
    const box = toBox(node);
    node.setAttrs({ scaleX: 1, scaleY: 1 });
    cb.current.onBoxChange(id, box);
  };

  const stagePoint = (e: Konva.KonvaEventObject<MouseEvent>) => e.target.getStage()!.getPointerPosition()!;

  const onMouseDown = useCallback(
    (e: Konva.KonvaEventObject<MouseEvent>) => {
      const pt = stagePoint(e);
      if (p.tool === "draw") {
        setDraft({ x0: pt.x, y0: pt.y, x1: pt.x, y1: pt.y });
        return;
      }
      if (e.target === e.target.getStage() || e.target.name() === "backdrop") p.onSelect(null);
    },
    [p],
  );
  const onMouseMove = (e: Konva.KonvaEventObject<MouseEvent>) => {
    const pt = stagePoint(e);
    livePointer.current = pt;
    if (draft) setDraft({ ...draft, x1: pt.x, y1: pt.y });
  };
  const onMouseUp = () => {
    if (!draft) return;
    const x = Math.min(draft.x0, draft.x1) / scale;
    const y = Math.min(draft.y0, draft.y1) / scale;
    const w = Math.abs(draft.x1 - draft.x0) / scale;
    const h = Math.abs(draft.y1 - draft.y0) / scale;
    setDraft(null);
    if (w >= 4 && h >= 4) p.onDrawn(clampBox({ x, y, width: w, height: h }, p.width, p.height));
  };

  // live tracking: while playing, the live track's box centres on the pointer at every frame
  useEffect(() => {
    if (p.liveTrackId == null) return;
    const t = p.tracks.find((x) => x.id === p.liveTrackId);
    const pt = livePointer.current;
    if (!t || !pt || !playerRef.current || playerRef.current.paused()) return;
    const last = t.keyframes.at(-1)!.box;
    const box = clampBox({ x: pt.x / scale - last.width / 2, y: pt.y / scale - last.height / 2, width: last.width, height: last.height }, p.width, p.height);
    if (p.frame > t.lastFrame || p.frame < t.firstFrame || Math.abs(box.x - (boxAt(t, p.frame)?.x ?? -1)) > 0.5 || Math.abs(box.y - (boxAt(t, p.frame)?.y ?? -1)) > 0.5) p.onLive(t.id, p.frame, box);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [p.frame]);

  return (
    <div ref={shellRef} className="w-full">
      <div className="relative mx-auto bg-black" style={{ width: dw, height: dh }} data-testid="video-stage">
        <div ref={holderRef} className="absolute inset-0" />
        <canvas ref={previewRef} width={dw} height={dh} className="pointer-events-none absolute inset-0" data-testid="preview-canvas" />
        <Stage
          width={dw}
          height={dh}
          className="absolute inset-0"
          style={{ cursor: p.tool === "draw" ? "crosshair" : "default" }}
          onMouseDown={onMouseDown}
          onMouseMove={onMouseMove}
          onMouseUp={onMouseUp}
        >
          <Layer ref={layerRef}>
            <Rect name="backdrop" x={0} y={0} width={dw} height={dh} fill="rgba(0,0,0,0)" />
            {active.map((t) => {
              const b = boxAt(t, p.frame)!;
              const selected = t.id === p.selectedId;
              return (
                <Rect
                  key={t.id}
                  id={`box-${t.id}`}
                  x={b.x * scale}
                  y={b.y * scale}
                  width={b.width * scale}
                  height={b.height * scale}
                  stroke={trackColor(t)}
                  strokeWidth={selected ? 3 : 2}
                  dash={t.manual ? [6, 4] : t.enabled === false ? [3, 3] : undefined}
                  fill={selected ? "rgba(255,255,255,0.08)" : "rgba(0,0,0,0.001)"}
                  strokeScaleEnabled={false}
                  perfectDrawEnabled={false}
                  shadowForStrokeEnabled={false}
                  draggable={p.tool === "select"}
                  onMouseDown={(e) => {
                    if (p.tool === "select") {
                      e.cancelBubble = true;
                      p.onSelect(t.id);
                    }
                  }}
                  onDragStart={(e) => begin(t.id, e.target)}
                  onDragEnd={(e) => end(t.id, e.target)}
                  onTransformStart={(e) => begin(t.id, e.target)}
                  onTransformEnd={(e) => end(t.id, e.target)}
                />
              );
            })}
            {/* every label in one shape: one node instead of three per box keeps seeking cheap */}
            <Shape
              listening={false}
              perfectDrawEnabled={false}
              sceneFunc={(ctx) => {
                ctx.font = "bold 11px system-ui, sans-serif";
                ctx.textBaseline = "top";
                for (const t of active) {
                  const b = boxAt(t, p.frame)!;
                  const score = scoreAt(t, p.frame);
                  const text = `${t.id} ${CLASS_LABELS[t.type]}${score != null ? ` ${score.toFixed(2)}` : ""}${t.enabled === false ? " (off)" : ""}`;
                  const x = b.x * scale;
                  const y = Math.max(0, b.y * scale - 15);
                  ctx.fillStyle = trackColor(t);
                  ctx.globalAlpha = 0.85;
                  ctx.fillRect(x, y, ctx.measureText(text).width + 6, 15);
                  ctx.globalAlpha = 1;
                  ctx.fillStyle = "#0b1220";
                  ctx.fillText(text, x + 3, y + 2);
                }
              }}
            />
            {draft && (
              <Rect
                x={Math.min(draft.x0, draft.x1)}
                y={Math.min(draft.y0, draft.y1)}
                width={Math.abs(draft.x1 - draft.x0)}
                height={Math.abs(draft.y1 - draft.y0)}
                stroke="#ec4899"
                dash={[6, 4]}
                strokeWidth={2}
                listening={false}
              />
            )}
            <Transformer ref={trRef} rotateEnabled={false} keepRatio={false} ignoreStroke flipEnabled={false} anchorSize={8} borderStroke="#fff" anchorStroke="#0f172a" boundBoxFunc={(o, n) => (n.width < 4 || n.height < 4 ? o : n)} />
          </Layer>
        </Stage>
      </div>
    </div>
  );
});
