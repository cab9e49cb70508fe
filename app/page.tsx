export default function Home() {
  return (
    <main style={{ maxWidth: 720 }}>
      <h1>Obscura</h1>
      <p>Self-hosted redaction and video analytics. This server answers the redaction API under <code>/api/v1</code>.</p>
      <ul>
        <li>
          <a href="/docs/api">API reference</a> (OpenAPI 3.1 document at <a href="/openapi.json">/openapi.json</a>)
        </li>
        <li>
          <a href="/healthz">Health</a>
        </li>
      </ul>
    </main>
  );
}
