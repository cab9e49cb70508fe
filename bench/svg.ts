/** A small horizontal bar chart as SVG, for benchmark reports (no plotting dependency needed). */
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
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
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
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="system-ui, sans-serif">
<rect width="100%" height="100%" fill="#fff"/>
<text x="16" y="26" font-size="15" font-weight="600">${esc(title)}</text>
${rows}
</svg>
`;
}
