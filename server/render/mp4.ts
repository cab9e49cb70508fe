/**
 * Writes a display rotation into an MP4 we encoded: the video track header's (tkhd) matrix,
 * patched in place (36 bytes, the file keeps its size and layout). ffmpeg 4.1 drops
 * `-metadata:s:v rotate=N` when it encodes (test/helpers/fixtures.ts), and the renderer encodes
 * the source's frames as stored, so the rotation the source carried is put back here, the way
 * ffmpeg's own muxer writes it. `rotation` is clockwise degrees (MediaInfo's convention).
 */
import { open, type FileHandle } from "node:fs/promises";
import { ObscuraError } from "@/lib/errors";

interface BoxRef {
  type: string;
  /** File offset of the box's content (after its header). */
  start: number;
  end: number;
}

async function readBoxes(fh: FileHandle, from: number, to: number): Promise<BoxRef[]> {
  const out: BoxRef[] = [];
  const head = Buffer.alloc(16);
  let at = from;
  while (at + 8 <= to) {
    const { bytesRead } = await fh.read(head, 0, 16, at);
    if (bytesRead < 8) break;
    let size = head.readUInt32BE(0);
    const type = head.toString("latin1", 4, 8);
    let header = 8;
    if (size === 1) {
      if (bytesRead < 16) break;
      size = Number(head.readBigUInt64BE(8));
      header = 16;
    } else if (size === 0) {
      size = to - at;
    }
    if (size < header || at + size > to) break;
    out.push({ type, start: at + header, end: at + size });
    at += size;
  }
  return out;
}

/** The 3x3 tkhd matrix (16.16 fixed, w in 2.30) for a clockwise rotation, as ffmpeg writes it. */
export function rotationMatrix(rotation: number, width: number, height: number): Buffer {
  const m = Buffer.alloc(36);
  const [a, b, c, d, tx, ty] =
    rotation === 90 ? [0, 1, -1, 0, height, 0] : rotation === 180 ? [-1, 0, 0, -1, width, height] : rotation === 270 ? [0, -1, 1, 0, 0, width] : [1, 0, 0, 1, 0, 0];
  const fixed = [a, b, 0, c, d, 0, tx, ty];
  fixed.forEach((v, i) => m.writeInt32BE(i === 2 || i === 5 ? 0 : v * 65536, i * 4));
  m.writeInt32BE(1 << 30, 32);
  return m;
}

export async function setMp4Rotation(file: string, rotation: number, size: { width: number; height: number }): Promise<void> {
  if (![0, 90, 180, 270].includes(rotation)) throw new RangeError(`rotation must be 0, 90, 180 or 270, not ${rotation}`);
  const fh = await open(file, "r+");
  try {
    const { size: fileSize } = await fh.stat();
    const moov = (await readBoxes(fh, 0, fileSize)).find((b) => b.type === "moov");
    if (!moov) throw new Error("no moov box");
    for (const trak of (await readBoxes(fh, moov.start, moov.end)).filter((b) => b.type === "trak")) {
      const children = await readBoxes(fh, trak.start, trak.end);
      const mdia = children.find((b) => b.type === "mdia");
      const tkhd = children.find((b) => b.type === "tkhd");
      if (!mdia || !tkhd) continue;
      const hdlr = (await readBoxes(fh, mdia.start, mdia.end)).find((b) => b.type === "hdlr");
      if (!hdlr) continue;
      const handler = Buffer.alloc(4);
      await fh.read(handler, 0, 4, hdlr.start + 8);
      if (handler.toString("latin1") !== "vide") continue;
      const version = Buffer.alloc(1);
      await fh.read(version, 0, 1, tkhd.start);
      // version/flags 4, times and ids (20 or 32), reserved 8, layer/group/volume/reserved 8.
      const matrixAt = tkhd.start + 4 + (version[0] === 1 ? 32 : 20) + 8 + 8;
      if (matrixAt + 36 > tkhd.end) throw new Error("tkhd too short");
      await fh.write(rotationMatrix(rotation, size.width, size.height), 0, 36, matrixAt);
      return;
    }
    throw new Error("no video track");
  } catch (cause) {
    throw new ObscuraError("INTERNAL", `could not write the rotation into the rendered MP4: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  } finally {
    await fh.close();
  }
}
