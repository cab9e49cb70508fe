export const dynamic = "force-static";

/** The API reference page: Redoc rendering /openapi.json, no CDN. */
export async function GET() {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Obscura API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{margin:0}</style></head>
<body><redoc spec-url="/openapi.json" hide-download-button="false"></redoc>
<script src="/docs/api/redoc.standalone.js"></script></body></html>`;
  return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
}
