/**
 * The admin console in a real browser (playwright-core driving Debian's /usr/bin/chromium) against
 * the real server: first-run setup, sign-in and sign-out, a wrong password and the lockout, a
 * reviewer created and refused from /admin, an API token created, used and revoked, a licence
 * uploaded, a tampered one refused, and an expired one blocking new processing. Screenshots of the
 * pages: docs/img/admin-*.png when OBSCURA_DOCS_SCREENSHOTS=1.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { formatLicense, rawPublicKey, signLicense } from "@/server/license";
import { ROOT, startServer, tempDir, type TestServer, TOKEN } from "./helpers/server";

const CHROMIUM = process.env.OBSCURA_CHROMIUM ?? "/usr/bin/chromium";
const ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
const ADMIN_PASSWORD = "Correct-Horse-42!";
const REVIEWER_PASSWORD = "Blue-Lantern-2026";
/** The docs' screenshots are refreshed with OBSCURA_DOCS_SCREENSHOTS=1; otherwise they go to a scratch folder. */
const SHOTS = process.env.OBSCURA_DOCS_SCREENSHOTS ? path.join(ROOT, "docs", "img") : tempDir("admin-shots");

describe.skipIf(!fs.existsSync(CHROMIUM))("admin console in chromium", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  const vendor = crypto.generateKeyPairSync("ed25519");
  const dir = tempDir("admin-e2e");

  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `admin-${name}.png`), fullPage: true });
  const submit = async (form = "form") => {
    await page.locator(`${form} button[type=submit]`).first().click();
  };
  /** React resets a form after its action: wait for that (the password field empties) before typing again. */
  const settle = async () => {
    await page.waitForLoadState("networkidle");
    if (await page.locator("#password").count()) await expect.poll(() => page.inputValue("#password")).toBe("");
  };

  beforeAll(async () => {
    s = await startServer({
      OBSCURA_LICENSE_PUBLIC_KEYS: rawPublicKey(vendor.publicKey).toString("base64"),
      OBSCURA_SIGNIN_MAX_FAILURES: "3",
      OBSCURA_WORKERS: "0",
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    fs.mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await s?.stop();
  });

  it("leads a fresh install to setup, refuses a weak password inline, then creates the admin", async () => {
    await page.goto(s.url + "/");
    expect(new URL(page.url()).pathname).toBe("/admin/setup");
    await page.fill("#username", "chief");
    await page.fill("#password", "short");
    await page.fill("#confirm", "short");
    await submit();
    await expect.poll(() => page.locator("#password-error").textContent()).toMatch(/at least 12 characters/);
    await shot("setup-error");
    await settle();
    await page.fill("#password", ADMIN_PASSWORD);
    await page.fill("#confirm", ADMIN_PASSWORD);
    await submit();
    await page.waitForURL(/\/admin\/license\?welcome=1/);
    await expect.poll(() => page.locator("body").textContent()).toMatch(/Step 2 of 2/);
    await shot("setup-license");
    await page.click("text=Continue without a licence");
    await page.waitForURL(/\/admin$/);
    expect(await page.locator("body").textContent()).toMatch(/Evaluation mode/);
    await shot("overview");
    // setup happens once
    await page.goto(s.url + "/admin/setup");
    expect(new URL(page.url()).pathname).toBe("/admin");
  });

  it("creates a reviewer", async () => {
    await page.goto(s.url + "/admin/users");
    await page.fill("#username", "rita");
    await page.fill("#displayName", "Rita Reviewer");
    await page.fill("#password", "rita");
    await page.locator("form:has(#role) button[type=submit]").click();
    await expect.poll(() => page.locator("#password-error").textContent()).toMatch(/12 characters/);
    await settle();
    await page.fill("#username", "rita");
    await page.fill("#password", REVIEWER_PASSWORD);
    await page.selectOption("#role", "reviewer");
    await page.locator("form:has(#role) button[type=submit]").click();
    await expect.poll(() => page.locator("tr[data-user=rita]").count()).toBe(1);
    expect(await page.locator("tr[data-user=rita]").textContent()).toMatch(/Rita Reviewer.*reviewer.*active/);
    // promote and demote: the role column follows
    await page.click("button[aria-label='Make rita an administrator']");
    await expect.poll(() => page.locator("tr[data-user=rita]").textContent()).toMatch(/Rita Reviewer.*admin.*active/);
    await page.click("button[aria-label='Make rita a reviewer']");
    await expect.poll(() => page.locator("tr[data-user=rita]").textContent()).toMatch(/Rita Reviewer.*reviewer.*active/);
    await shot("users");
  });

  it("creates an API token shown once, which works against the API until it is revoked", async () => {
    await page.goto(s.url + "/admin/tokens");
    await page.fill("#name", "ingest-server");
    await page.selectOption("#kind", "bearer");
    await page.locator("form:has(#kind) button[type=submit]").click();
    const token = (await page.locator("[data-testid=new-token]").textContent({ timeout: 30_000 }))!.trim();
    expect(token).toMatch(/^obs_b_/);
    await shot("tokens");
    const call = () =>
      fetch(`${s.url}/api/v1/projects/default/locations/local/operations/${crypto.randomUUID()}`, { headers: { authorization: `Bearer ${token}` } });
    expect((await call()).status).toBe(404); // authenticated: the operation does not exist
    await page.reload();
    expect(await page.locator("tr[data-token=ingest-server]").textContent()).not.toContain(token); // never shown again
    page.once("dialog", (d) => d.accept());
    await page.click("button[aria-label='Revoke ingest-server']");
    await expect.poll(() => page.locator("tr[data-token=ingest-server]").textContent()).toMatch(/revoked/);
    const after = await call();
    expect(after.status).toBe(401);
    expect((await after.json()).error.message).toMatch(/revoked/);
  });

  it("an API key made in /admin opens the vehicle annotation API; a bearer token does not; revoked, it stops", async () => {
    const make = async (name: string, kind: string) => {
      await page.goto(s.url + "/admin/tokens");
      await page.fill("#name", name);
      await page.selectOption("#kind", kind);
      await page.locator("form:has(#kind) button[type=submit]").click();
      return (await page.locator("[data-testid=new-token]").textContent({ timeout: 30_000 }))!.trim();
    };
    const key = await make("plate-reader", "apikey");
    const bearer = await make("not-a-key", "bearer");
    const annotate = (k: string) => fetch(`${s.url}/v11/images:annotate`, { method: "POST", headers: { "x-api-key": k, "content-type": "application/json" }, body: "{}" });
    // with the key: past authentication (503 while the models warm up, then 400 for the empty body)
    expect([400, 503]).toContain((await annotate(key)).status);
    const wrongKind = await annotate(bearer);
    expect(wrongKind.status).toBe(401);
    page.once("dialog", (d) => d.accept());
    await page.click("button[aria-label='Revoke plate-reader']");
    await expect.poll(() => page.locator("tr[data-token=plate-reader]").textContent(), { timeout: 30_000 }).toMatch(/revoked/);
    const after = await annotate(key);
    expect(after.status).toBe(401);
    expect((await after.json()).error.message).toMatch(/revoked/);
  });

  it("installs an uploaded licence, refuses a tampered one, and an expired one blocks new processing", async () => {
    const good = formatLicense(signLicense({ id: "lic-e2e", licensee: "Testville Police", seats: 10, features: ["*"], issuedAt: "2026-01-01", expiresAt: "2099-01-01" }, vendor.privateKey));
    const file = path.join(dir, "testville.lic");
    fs.writeFileSync(file, good);
    await page.goto(s.url + "/admin/license");
    await page.setInputFiles("#file", file);
    await submit("form:has(#file)");
    await expect.poll(() => page.locator("body").textContent()).toMatch(/Licence for Testville Police installed/);
    await page.reload();
    expect(await page.locator("body").textContent()).toMatch(/Testville Police.*days left/);
    expect(await page.locator("body").textContent()).not.toMatch(/Evaluation mode/);
    await shot("license");

    const tampered = good.replace('"seats": 10', '"seats": 1000');
    await page.fill("#document", tampered);
    await submit("form:has(#file)");
    await expect.poll(() => page.locator("form [role=alert]").first().textContent()).toMatch(/signature does not match/);
    await shot("license-refused");
    await settle();

    const expired = formatLicense(signLicense({ id: "lic-old", licensee: "Testville Police", seats: 10, features: ["*"], issuedAt: "2024-01-01", expiresAt: "2025-01-01" }, vendor.privateKey));
    await page.fill("#document", expired);
    await submit("form:has(#file)");
    await expect.poll(() => page.locator("body").textContent()).toMatch(/installed/);
    await page.reload();
    expect(await page.locator("body").textContent()).toMatch(/The licence has expired/);
    const r = await s.api("POST", "/api/v1/videos:process", { inputUri: "file:///nowhere/clip.mp4", features: ["FACE_DETECTION"] });
    expect(r.status).toBe(403);
    expect(r.body.error.message).toMatch(/expired on 2025-01-01.*reading and editing still work/);
    const annotate = () => fetch(`${s.url}/v11/images:annotate`, { method: "POST", headers: { "x-api-key": TOKEN, "content-type": "application/json" }, body: "{}" });
    const v = await annotate();
    expect(v.status).toBe(403);
    expect((await v.json()).error.message).toMatch(/expired on 2025-01-01/);
    // a licence for redaction only: the vehicle API is refused, redaction works
    const redactionOnly = formatLicense(signLicense({ id: "lic-redact", licensee: "Testville Police", seats: 10, features: ["redaction"], issuedAt: "2026-01-01", expiresAt: "2099-01-01" }, vendor.privateKey));
    await page.fill("#document", redactionOnly);
    await submit("form:has(#file)");
    await expect.poll(() => page.locator("body").textContent()).toMatch(/installed/);
    await new Promise((r) => setTimeout(r, 5500)); // the licence status is cached for 5 s per process
    const notLicensed = await annotate();
    expect(notLicensed.status).toBe(403);
    expect((await notLicensed.json()).error.message).toMatch(/does not include vehicle-api/);
    // renew: processing is accepted again (the job itself then fails on the missing file)
    await page.fill("#document", good);
    await submit("form:has(#file)");
    await expect.poll(() => page.locator("body").textContent()).toMatch(/installed/);
    await new Promise((r) => setTimeout(r, 5500)); // the licence status is cached for 5 s per process
    expect((await s.api("POST", "/api/v1/videos:process", { inputUri: "file:///nowhere/clip.mp4", features: ["FACE_DETECTION"] })).status).toBe(200);
  });

  it("signs out, locks a reviewer out after repeated wrong passwords, and keeps reviewers out of /admin", async () => {
    await page.click("text=Sign out");
    await page.waitForURL(/\/signin/);
    await page.goto(s.url + "/admin");
    expect(new URL(page.url()).pathname).toBe("/signin");
    await shot("signin");

    const signIn = async (username: string, password: string) => {
      await page.fill("#username", username);
      await page.fill("#password", password);
      await submit();
    };
    await signIn("rita", "not-her-password");
    await expect.poll(() => page.locator("form [role=alert]").first().textContent()).toMatch(/Wrong username or password/);
    await settle();
    await signIn("rita", "still-not-it");
    await expect.poll(() => page.locator("form [role=alert]").first().textContent()).toMatch(/Wrong username or password/);
    await settle();
    await signIn("rita", "third-wrong-one");
    await expect.poll(() => page.locator("form [role=alert]").first().textContent()).toMatch(/locked/);
    await settle();
    await signIn("rita", REVIEWER_PASSWORD); // right password, but locked
    await expect.poll(() => page.locator("form [role=alert]").first().textContent()).toMatch(/locked/);
    await shot("signin-locked");

    // the admin unlocks her by setting a new password
    await settle();
    await signIn("chief", ADMIN_PASSWORD);
    await page.waitForURL((u) => !u.pathname.startsWith("/signin"));
    await page.goto(s.url + "/admin/users");
    await page.click("button[aria-label='Reset the password of rita']");
    await page.fill("input[aria-label='New password for rita']", "Green-Lantern-2027");
    await page.locator("tr[data-user=rita] form:has(input[name=password]) button[type=submit]").click();
    await expect.poll(() => page.locator("tr[data-user=rita]").textContent()).toMatch(/Password changed/);
    await page.goto(s.url + "/admin/audit");
    expect(await page.locator("body").textContent()).toMatch(/user\.locked.*|sign-in\.failure/);
    await shot("audit");
    await page.click("text=Sign out");
    await page.waitForURL(/\/signin/);

    await signIn("rita", "Green-Lantern-2027");
    await page.waitForURL((u) => !u.pathname.startsWith("/signin"));
    await page.goto(s.url + "/admin");
    expect(await page.locator("body").textContent()).toMatch(/Administrators only/);
    expect(await page.locator("nav[aria-label=Admin]").count()).toBe(0);
    await shot("reviewer-refused");
    // a reviewer's session cannot run admin actions either: the users page shows the refusal too
    await page.goto(s.url + "/admin/users");
    expect(await page.locator("body").textContent()).toMatch(/Administrators only/);
    expect(await page.locator("tr[data-user]").count()).toBe(0);

    // a reviewer changes her own password (the current one is checked)
    await page.goto(s.url + "/account");
    await page.fill("#current", "not-it-at-all");
    await page.fill("#password", "Orange-Lantern-2028");
    await page.fill("#confirm", "Orange-Lantern-2028");
    await submit();
    await expect.poll(() => page.locator("#current-error").textContent()).toMatch(/wrong password/);
    await settle();
    await page.fill("#current", "Green-Lantern-2027");
    await page.fill("#password", "Orange-Lantern-2028");
    await page.fill("#confirm", "Orange-Lantern-2028");
    await submit();
    await expect.poll(() => page.locator("body").textContent()).toMatch(/Your password was changed/);
    await shot("account");
  });
});
