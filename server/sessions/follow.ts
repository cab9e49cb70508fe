/** POST .../tracks:follow: the engine follows a drawn box's content (server/tracking/follow.ts). */
import { ObscuraError } from "@/lib/errors";
import { parseBody } from "@/lib/api/parse";
import { followRequestSchema } from "@/lib/api/session";
import type { Principal } from "../auth/bearer";
import type { MediaInfo } from "../media";
import { follow, type FollowResult } from "../tracking/follow";
import { readDetections, sessionMediaFile, visible } from "./index";

export async function followInSession(projectId: string, sessionId: string, who: Principal, body: unknown): Promise<Omit<FollowResult, "framesPerSecond">> {
  const req = parseBody(followRequestSchema, body);
  const s = await visible(projectId, sessionId, who);
  const det = await readDetections(s);
  const media = s.media as MediaInfo | null;
  if (!det || !media?.video) throw new ObscuraError("FAILED_PRECONDITION", "this session has no video frames to follow yet");
  const last = det.frameCount - 1;
  if (req.frame > last) throw new ObscuraError("INVALID_ARGUMENT", `frame ${req.frame} is past the video's last frame ${last}`, { details: [{ field: "frame", problem: `must be 0..${last}` }] });
  const b = req.box;
  if (b.width < 4 || b.height < 4) throw new ObscuraError("INVALID_ARGUMENT", `the box (${b.width}x${b.height}) is too small to follow: at least 4x4 px`, { details: [{ field: "box", problem: "smaller than 4x4 px" }] });
  if (b.x < 0 || b.y < 0 || b.x + b.width > det.width + 0.5 || b.y + b.height > det.height + 0.5) {
    throw new ObscuraError("INVALID_ARGUMENT", `the box must lie inside the ${det.width}x${det.height} frame`, { details: [{ field: "box", problem: `outside 0..${det.width} x 0..${det.height}` }] });
  }
  const { file } = await sessionMediaFile(projectId, sessionId, who);
  const { framesPerSecond: _fps, ...result } = await follow(file, media, { frame: req.frame, box: b, direction: req.direction ?? "both", maxFrames: req.maxFrames ?? 300, frameCount: det.frameCount, signal: AbortSignal.timeout(120_000) });
  return result;
}
