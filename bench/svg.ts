/** Small SVG charts for benchmark reports (no plotting dependency needed). */

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");

const open = (width: number, height: number, title: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="system-ui, sans-serif">
<rect width="100%" height="100%" fill="#fff"/>
<text x="16" y="26" font-size="15" font-weight="600">${esc(title)}</text>`;

export interface Bar {
  label: string;
  value: number;
  note?: string;
}

export function barChart(title: string, unit: string, bars: Bar[]): string {
  const width = 640;
  const rowH = 34;
  const left = 170;
  const top = 44;
  const max = Math.max(...bars.map((b) => b.value), 1e-9);
  const height = top + bars.length * rowH + 16;
  const rows = bars
    .map((b, i) => {
      const y = top + i * rowH;
      const w = Math.max(2, ((width - left - 150) * b.value) / max);
      return [
        `<text x="${left - 10}" y="${y + 20}" text-anchor="end" font-size="13">${esc(b.label)}</text>`,
        `<rect x="${left}" y="${y + 5}" width="${w.toFixed(1)}" height="22" rx="3" fill="${i % 2 ? "#2b7bb9" : "#9f0500"}"/>`,
        `<text x="${left + w + 8}" y="${y + 20}" font-size="13">${b.value} ${esc(unit)}${b.note ? ` (${esc(b.note)})` : ""}</text>`,
      ].join("");
    })
    .join("\n");
  return `${open(width, height, title)}
${rows}
</svg>
`;
}

/** A small line chart as SVG (no plotting dependency): one or more series of (x, y) points. */
export function lineChart(opts: {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Array<{ label: string; color: string; dash?: boolean; points: Array<[number, number]> }>;
  yMax?: number;
  lines?: Array<{ y: number; label: string }>;
  /** Top of the legend, in pixels below the plot's top (default 0). */
  legendTop?: number;
}): string {
  const W = 720;
  const H = 360;
  const L = 64;
  const R = 20;
  const T = 44;
  const B = 48;
  const xs = opts.series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = opts.series.flatMap((s) => s.points.map((p) => p[1]));
  const xMax = niceMax(Math.max(1e-9, ...xs));
  const yMax = opts.yMax ?? niceMax(Math.max(1e-9, ...ys, ...(opts.lines ?? []).map((l) => l.y)) * 1.05);
  const X = (x: number) => L + ((W - L - R) * x) / xMax;
  const Y = (y: number) => H - B - ((H - T - B) * y) / yMax;
  const grid: string[] = [];
  for (let i = 0; i <= 5; i++) {
    const y = (yMax * i) / 5;
    const x = (xMax * i) / 5;
    grid.push(`<line x1="${L}" x2="${W - R}" y1="${Y(y).toFixed(1)}" y2="${Y(y).toFixed(1)}" stroke="#e5e5e5"/>`);
    grid.push(`<text x="${L - 6}" y="${(Y(y) + 4).toFixed(1)}" text-anchor="end" font-size="11">${+y.toFixed(0)}</text>`);
    grid.push(`<text x="${X(x).toFixed(1)}" y="${H - B + 16}" text-anchor="middle" font-size="11">${+x.toFixed(0)}</text>`);
  }
  const refs = (opts.lines ?? []).map(
    (l) => `<line x1="${L}" x2="${W - R}" y1="${Y(l.y).toFixed(1)}" y2="${Y(l.y).toFixed(1)}" stroke="#999" stroke-dasharray="6 4"/>` +
      `<text x="${W - R - 4}" y="${(Y(l.y) - 5).toFixed(1)}" text-anchor="end" font-size="11" fill="#666">${esc(l.label)}</text>`,
  );
  const paths = opts.series.map(
    (s) => `<polyline fill="none" stroke="${s.color}" stroke-width="1.8"${s.dash ? ' stroke-dasharray="5 3"' : ""} points="${s.points.map((p) => `${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join(" ")}"/>`,
  );
  const lt = T + (opts.legendTop ?? 0);
  const legend = opts.series.map(
    (s, i) => `<line x1="${L + 10}" x2="${L + 34}" y1="${lt + 12 + i * 17}" y2="${lt + 12 + i * 17}" stroke="${s.color}" stroke-width="2"${s.dash ? ' stroke-dasharray="5 3"' : ""}/>` +
      `<text x="${L + 40}" y="${lt + 16 + i * 17}" font-size="12">${esc(s.label)}</text>`,
  );
  return `${open(W, H, opts.title)}
${grid.join("\n")}
<line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="#333"/><line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="#333"/>
<text x="${(L + W - R) / 2}" y="${H - 10}" text-anchor="middle" font-size="12">${esc(opts.xLabel)}</text>
<text x="16" y="${(T + H - B) / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 16 ${(T + H - B) / 2})">${esc(opts.yLabel)}</text>
${refs.join("\n")}
${paths.join("\n")}
${legend.join("\n")}
</svg>
`;
}

function niceMax(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}
