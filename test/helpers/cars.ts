/**
 * A car seen from the side with a licence plate on its tail, drawn as SVG (the plate text in
 * DejaVu Sans Bold, which CI installs) and rendered by sharp. The COCO detector takes it for a car
 * (score ~0.5 in red, blue or white) and the plate reads. assets/vehicle-health.svg is the same
 * drawing (blue, 7XYZ482).
 */
import sharp from "sharp";

export function carSvg(fill: string, plate: string, dx = 0, scale = 1): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="500">
<defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#9cc3e6"/><stop offset="1" stop-color="#dde8f0"/></linearGradient></defs>
<rect width="800" height="300" fill="url(#sky)"/><rect y="300" width="800" height="200" fill="#6b6b6b"/>
<g transform="translate(${dx} ${scale === 1 ? 0 : 400 - 393 * scale}) scale(${scale})">
<path d="M110 330 L130 270 Q140 250 170 248 L250 245 L320 185 Q335 172 360 172 L520 172 Q545 172 565 190 L630 245 L690 255 Q720 262 725 290 L730 330 Q730 345 715 345 L120 345 Q105 345 110 330 Z" fill="${fill}" stroke="#222" stroke-width="3"/>
<path d="M335 192 L270 245 L430 245 L430 192 Z" fill="#2c3e50" opacity="0.85"/><path d="M445 192 L445 245 L610 245 L555 195 Q545 190 530 192 Z" fill="#2c3e50" opacity="0.85"/>
<circle cx="230" cy="345" r="48" fill="#111"/><circle cx="230" cy="345" r="24" fill="#aaa"/>
<circle cx="610" cy="345" r="48" fill="#111"/><circle cx="610" cy="345" r="24" fill="#aaa"/>
<rect x="690" y="280" width="30" height="14" fill="#ffd"/>
<rect x="112" y="278" width="110" height="44" rx="4" fill="#f8f8f2" stroke="#222" stroke-width="2"/>
<text x="167" y="310" font-family="DejaVu Sans" font-weight="bold" font-size="19" text-anchor="middle" fill="#112">${plate}</text>
</g></svg>`;
}

export async function carPng(fill: string, plate: string): Promise<Buffer> {
  return sharp(Buffer.from(carSvg(fill, plate))).png().toBuffer();
}

export async function carJpeg(fill: string, plate: string): Promise<Buffer> {
  return sharp(Buffer.from(carSvg(fill, plate))).jpeg({ quality: 92 }).toBuffer();
}

/** Two cars, top left and bottom right of a 1200 x 1000 picture (scores ~0.2 and ~0.5): plates and vehicles must pair up. */
export async function twoCarsPng(a: [string, string], b: [string, string]): Promise<Buffer> {
  const left = await carPng(a[0], a[1]);
  const right = await carPng(b[0], b[1]);
  return sharp({ create: { width: 1200, height: 1000, channels: 3, background: "#6b6b6b" } })
    .composite([
      { input: left, left: 0, top: 0 },
      { input: right, left: 400, top: 500 },
    ])
    .png()
    .toBuffer();
}
