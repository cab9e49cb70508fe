/**
 * Renders the example pictures of docs/rendering.md into docs/img/render-*.png: a crop of the
 * face-api sample photo with the face box the face detector gives (x1.5), in every style, shape
 * and intensity. `node --import tsx bench/render-doc-images.ts`
 */
import path from "node:path";
import sharp from "sharp";
import { redactImage, type Intensity, type RedactionShape, type RedactionStyle } from "../server/render";

const SAMPLE = path.resolve("node_modules/@vladmandic/face-api/demo/sample1.jpg");
const OUT = path.resolve("docs/img");
/** The sample scaled to 960 px wide; the middle face as FACE_DETECTION boxes it (x1.5). */
const WIDTH = 960;
const FACE = { x: 388, y: 183, width: 156, height: 177 };
const CROP = { left: 336, top: 140, width: 260, height: 260 };
const SIZE = 200;

async function render(name: string, style?: { s: RedactionStyle; shape: RedactionShape; i: Intensity }) {
  const { data, info } = await sharp(SAMPLE).resize(WIDTH).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const image = { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height };
  if (style) {
    redactImage(image, [{ type: "face", box: FACE }], { redactionStyle: style.s, redactionShape: style.shape, redactionIntensity: style.i, redactionColor: "#9F0500" }, 0x5eed);
  }
  const file = path.join(OUT, `render-${name}.png`);
  await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .extract(CROP)
    .resize(SIZE)
    .png({ palette: true, quality: 100, colours: 256, dither: 0, compressionLevel: 9 })
    .toFile(file);
  return file;
}

const files = [await render("original")];
for (const s of ["BLUR", "PIXELATE", "MOSAIC", "FILL", "OUTLINE"] as const) {
  for (const shape of ["RECTANGLE", "ELLIPSE"] as const) files.push(await render(`${s.toLowerCase()}-${shape.toLowerCase()}`, { s, shape, i: "MEDIUM" }));
}
files.push(await render("smart", { s: "SMART", shape: "RECTANGLE", i: "MEDIUM" })); // SMART picks the shape (a face: ELLIPSE)
for (const s of ["BLUR", "PIXELATE", "MOSAIC"] as const) {
  for (const i of ["LOW", "HIGH"] as const) files.push(await render(`${s.toLowerCase()}-${i.toLowerCase()}`, { s, shape: "RECTANGLE", i }));
}
console.log(`${files.length} pictures in ${OUT}`);
