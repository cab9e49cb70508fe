/**
 * The session state layout (docs/state.md). The same files live in the internal state
 * (OBSCURA_STATE_URI/<sessionId>/) and in a state bucket given as outputUri, and a state bucket
 * can be given back as inputUri:
 *
 *   manifest.json            SessionManifest: ids, input, media facts, hashes, features, render
 *   source.<ext>             the original media as fetched
 *   detections.json          tracks (keyframes) of every detected object, and what ran
 *   objects.jsonl            per frame: {frame, time, objects: [{trackId, type, score, boundingBox}]}
 *   hashes.json              { original: {sha256: ...}, export: {...} }
 *   thumbnails/thumb-NNNN.jpg, thumbnails/poster.jpg
 *   redacted.mp4             when rendering was requested
 *   leaks.json               the leak check of redacted.mp4 (leak-check.ts), when it ran
 *   transcript.json          SPEECH_TRANSCRIPTION: segments with times (server/speech)
 *   transcript.vtt           the same as WebVTT captions
 */
import fs from "node:fs/promises";
import path from "node:path";
import { ObscuraError } from "@/lib/errors";
import type { Feature, HashType } from "@/lib/api/common";
import type { VideoJobSpec } from "@/lib/api/video";
import type { MediaInfo } from "../media";
import type { Track } from "../tracking";
import type { LeakSummary } from "./leak-check";

export const MANIFEST_SCHEMA = "obscura.session/v1";

export const FILES = {
  manifest: "manifest.json",
  detections: "detections.json",
  objects: "objects.jsonl",
  hashes: "hashes.json",
  thumbnails: "thumbnails",
  redacted: "redacted.mp4",
  leaks: "leaks.json",
  transcript: "transcript.json",
  transcriptVtt: "transcript.vtt",
} as const;

export interface SessionManifest {
  schema: typeof MANIFEST_SCHEMA;
  sessionId: string;
  projectId: string;
  /** The input the media came from (secrets in the query removed). */
  inputUri: string;
  createdAt: string;
  updatedAt: string;
  /** Name of the original media inside the state. */
  source: string;
  media: MediaInfo;
  hashes: { original: Partial<Record<HashType, string>>; export: Partial<Record<HashType, string>> };
  features: Feature[];
  thumbnails: { file: string; timeSeconds: number }[];
  render: null | { renderedAt: string; file: string; config: VideoJobSpec["render"] };
  /** The leak check of the last render (leaks.json), null when it did not run; absent in older manifests. */
  leakCheck?: null | ({ checkedAt: string; file: string } & LeakSummary);
  /** The last SPEECH_TRANSCRIPTION (transcript.json / transcript.vtt); absent when none ran. */
  transcript?: null | TranscriptInfo;
  acl: string[];
}

export interface TranscriptInfo {
  transcribedAt: string;
  file: string;
  vtt: string;
  languageCode: string;
  engine: string;
  segmentCount: number;
}

export interface DetectionsFile {
  schema: "obscura.detections/v1";
  sessionId: string;
  /** Features asked for detection in the operations that wrote this file. */
  features: Feature[];
  /** Detectors that ran (registry names). */
  detectors: string[];
  /** Features asked for that no installed detector answers (nothing was searched for them). */
  missingFeatures: string[];
  /** Tracking profile and detection stride of the last detection run. */
  profile: { name: string; detectionStride: number } | null;
  fps: number;
  frameCount: number;
  /** Display size of the video: boxes are in these pixels. */
  width: number;
  height: number;
  tracks: Track[];
}

export async function readManifest(stateDir: string): Promise<SessionManifest> {
  let text: string;
  try {
    text = await fs.readFile(path.join(/*turbopackIgnore: true*/ stateDir, FILES.manifest), "utf8");
  } catch {
    throw new ObscuraError("FAILED_PRECONDITION", `the state bucket has no ${FILES.manifest}: it is not an Obscura session state`);
  }
  let m: SessionManifest;
  try {
    m = JSON.parse(text) as SessionManifest;
  } catch {
    throw new ObscuraError("DATA_LOSS", `${FILES.manifest} in the state bucket is not valid JSON`);
  }
  if (m.schema !== MANIFEST_SCHEMA || !m.sessionId || !m.source) {
    throw new ObscuraError("FAILED_PRECONDITION", `${FILES.manifest} in the state bucket is not an ${MANIFEST_SCHEMA} manifest`);
  }
  return m;
}

export async function writeJson(file: string, data: unknown): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, JSON.stringify(data, null, 2) + "\n");
}
