/**
 * Frame buffers as the renderer sees them: one or more 8-bit planes over one byte buffer, so the
 * same pixel code runs on packed RGB (sharp, still images: three interleaved planes, step 3) and
 * on planar YUV 4:2:0 (ffmpeg rawvideo: a full-size luma plane and two half-size chroma planes).
 * Nothing here copies pixels: a Frame is a view over the caller's buffer.
 */

export type PixelFormat = "rgb24" | "yuv420p";

export interface Plane {
  data: Uint8Array;
  /** Byte index of the plane's pixel (0, 0). */
  offset: number;
  /** Bytes from one row to the next. */
  stride: number;
  /** Bytes from one pixel to the next in a row (1 planar, 3 packed RGB). */
  step: number;
  width: number;
  height: number;
  /** Subsampling: one plane pixel covers `sub` x `sub` frame pixels (2 for 4:2:0 chroma). */
  sub: 1 | 2;
  /** What the plane carries: "luma" (Y), "chroma" (U or V), or one of "red", "green", "blue". */
  role: "luma" | "chroma" | "red" | "green" | "blue";
}

export interface Frame {
  format: PixelFormat;
  width: number;
  height: number;
  planes: Plane[];
}

export function frameBytes(format: PixelFormat, width: number, height: number): number {
  if (format === "rgb24") return width * height * 3;
  const cw = Math.ceil(width / 2);
  const ch = Math.ceil(height / 2);
  return width * height + 2 * cw * ch;
}

/** Packed RGB (3 bytes per pixel, no row padding) as three interleaved planes. */
export function rgbFrame(data: Uint8Array, width: number, height: number): Frame {
  checkSize(data, "rgb24", width, height);
  const roles = ["red", "green", "blue"] as const;
  return {
    format: "rgb24",
    width,
    height,
    planes: roles.map((role, i) => ({ data, offset: i, stride: width * 3, step: 3, width, height, sub: 1 as const, role })),
  };
}

/** Planar YUV 4:2:0 (ffmpeg's yuv420p rawvideo layout: Y, then U, then V, no padding). */
export function yuv420pFrame(data: Uint8Array, width: number, height: number): Frame {
  checkSize(data, "yuv420p", width, height);
  const cw = Math.ceil(width / 2);
  const ch = Math.ceil(height / 2);
  const y: Plane = { data, offset: 0, stride: width, step: 1, width, height, sub: 1, role: "luma" };
  const u: Plane = { data, offset: width * height, stride: cw, step: 1, width: cw, height: ch, sub: 2, role: "chroma" };
  const v: Plane = { ...u, offset: width * height + cw * ch };
  return { format: "yuv420p", width, height, planes: [y, u, v] };
}

function checkSize(data: Uint8Array, format: PixelFormat, width: number, height: number): void {
  const need = frameBytes(format, width, height);
  if (!(width > 0 && height > 0) || data.length < need) {
    throw new RangeError(`a ${width}x${height} ${format} frame needs ${need} bytes, got ${data.length}`);
  }
}

/** "#RRGGBB" -> [r, g, b]. */
export function parseColor(hex: string): [number, number, number] {
  const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex.trim());
  if (!m) throw new RangeError(`colour must be #RRGGBB, not ${JSON.stringify(hex)}`);
  return [parseInt(m[1]!, 16), parseInt(m[2]!, 16), parseInt(m[3]!, 16)];
}

/**
 * A colour as the value of each plane of a frame. YUV is limited range (16-235 / 16-240), with
 * BT.709 coefficients for frames 720 lines high or more and BT.601 below: what players assume for
 * untagged H.264, which is what the encoder writes.
 */
export function planeColors(frame: Frame, rgb: readonly [number, number, number]): number[] {
  const [r, g, b] = rgb;
  if (frame.format === "rgb24") return [r, g, b];
  const hd = Math.min(frame.width, frame.height) >= 720;
  const kr = hd ? 0.2126 : 0.299;
  const kb = hd ? 0.0722 : 0.114;
  const kg = 1 - kr - kb;
  const yf = (kr * r + kg * g + kb * b) / 255;
  const uf = (b / 255 - yf) / (2 * (1 - kb));
  const vf = (r / 255 - yf) / (2 * (1 - kr));
  const clamp = (x: number) => Math.max(0, Math.min(255, Math.round(x)));
  return [clamp(16 + 219 * yf), clamp(128 + 224 * uf), clamp(128 + 224 * vf)];
}
