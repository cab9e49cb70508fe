"use client";
/** Loads the editor in the browser only (video.js and Konva need the DOM). */
import dynamic from "next/dynamic";
import type { EditorProps } from "./editor";

const Editor = dynamic(() => import("./editor").then((m) => m.Editor), {
  ssr: false,
  loading: () => <div className="flex h-screen items-center justify-center bg-slate-950 text-slate-400">Loading the editor…</div>,
});

export function EditorClient(props: EditorProps) {
  return <Editor {...props} />;
}
