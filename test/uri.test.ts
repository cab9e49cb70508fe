import { afterEach, describe, expect, it } from "vitest";
import { isPrefixUri, joinUri, parseStorageUri, redactUri, uriProblem } from "@/lib/storage-uri";

const SAS = "sv=2025-11-05&se=2030-01-01T00%3A00%3A00Z&sr=c&sp=racwdl&sig=c2VjcmV0U2lnbmF0dXJl%2Bx%3D";
const AZ = `https://acct.blob.core.windows.net/container/dir/video.mp4?${SAS}`;
const AZ_PATH_STYLE = `http://127.0.0.1:10000/devstoreaccount1/container/dir/?${SAS}`;

describe("parseStorageUri", () => {
  const savedRoot = process.env.OBSCURA_WINDOWS_DRIVE_ROOT;
  afterEach(() => {
    if (savedRoot === undefined) delete process.env.OBSCURA_WINDOWS_DRIVE_ROOT;
    else process.env.OBSCURA_WINDOWS_DRIVE_ROOT = savedRoot;
  });

  it("parses file URIs and percent-decodes them", () => {
    expect(parseStorageUri("file:///data/in/video.mp4")).toEqual({ kind: "file", path: "/data/in/video.mp4" });
    expect(parseStorageUri("file:///data/my%20videos/caf%C3%A9.mp4")).toEqual({ kind: "file", path: "/data/my videos/café.mp4" });
    expect(parseStorageUri("file:///data/100%.mp4")).toEqual({ kind: "file", path: "/data/100%.mp4" });
    expect(parseStorageUri("file:///state/bucket/")).toEqual({ kind: "file", path: "/state/bucket/" });
    expect(parseStorageUri("file:///a//b/./c/../d.mp4")).toEqual({ kind: "file", path: "/a/b/d.mp4" });
  });

  it("maps Windows drive paths WSL-style, reading OBSCURA_WINDOWS_DRIVE_ROOT at call time", () => {
    delete process.env.OBSCURA_WINDOWS_DRIVE_ROOT;
    expect(parseStorageUri("file:///C:/dir/x.mp4")).toEqual({ kind: "file", path: "/mnt/c/dir/x.mp4" });
    expect(parseStorageUri("file:///c:/dir/x.mp4")).toEqual({ kind: "file", path: "/mnt/c/dir/x.mp4" });
    expect(parseStorageUri("file:///D:/out/")).toEqual({ kind: "file", path: "/mnt/d/out/" });
    process.env.OBSCURA_WINDOWS_DRIVE_ROOT = "/win";
    expect(parseStorageUri("file:///C:/My%20Videos/x.mp4")).toEqual({ kind: "file", path: "/win/c/My Videos/x.mp4" });
    expect(parseStorageUri("file:///C:/../../etc/passwd")).toEqual({ kind: "file", path: "/win/c/etc/passwd" });
  });

  it("rejects file://C:/ (two slashes) and hosts", () => {
    expect(() => parseStorageUri("file://C:/dir/x.mp4")).toThrow(/file:\/\/\/C:\//);
    expect(() => parseStorageUri("file://server/share/x.mp4")).toThrow(/absolute/);
  });

  it("parses s3 URIs", () => {
    expect(parseStorageUri("s3://bucket/path/to/x.mp4")).toEqual({ kind: "s3", bucket: "bucket", key: "path/to/x.mp4" });
    expect(parseStorageUri("s3://bucket/")).toEqual({ kind: "s3", bucket: "bucket", key: "" });
    expect(parseStorageUri("s3://bucket/state/")).toEqual({ kind: "s3", bucket: "bucket", key: "state/" });
  });

  it("recognises Azure SAS URLs (virtual-host and path style) and plain http(s)", () => {
    expect(parseStorageUri(AZ)).toEqual({ kind: "azure", url: AZ });
    expect(parseStorageUri(AZ_PATH_STYLE)).toEqual({ kind: "azure", url: AZ_PATH_STYLE });
    expect(parseStorageUri("https://acct.blob.core.windows.net/c/x.mp4?sig=abc&se=2030-01-01").kind).toBe("azure");
    expect(parseStorageUri("https://example.com/video.mp4?token=abc")).toEqual({ kind: "http", url: "https://example.com/video.mp4?token=abc" });
    expect(parseStorageUri("http://example.com/v.mp4?sig=only").kind).toBe("http"); // sig without sv/se is not a SAS
  });

  it("throws INVALID_ARGUMENT with a redacted URI", () => {
    try {
      parseStorageUri("ftp://host/x?sig=supersecret");
      expect.unreachable();
    } catch (e) {
      expect((e as { status: string }).status).toBe("INVALID_ARGUMENT");
      expect((e as Error).message).not.toContain("supersecret");
    }
  });
});

describe("isPrefixUri / joinUri", () => {
  it("detects prefixes on the path part only", () => {
    expect(isPrefixUri("file:///state/")).toBe(true);
    expect(isPrefixUri("s3://b/")).toBe(true);
    expect(isPrefixUri(AZ_PATH_STYLE)).toBe(true);
    expect(isPrefixUri(AZ)).toBe(false);
    expect(isPrefixUri("https://h/x?next=/")).toBe(false);
  });

  it("keeps the SAS query at the end", () => {
    expect(joinUri(`https://a/c/dir/?${SAS}`, "x/y.json")).toBe(`https://a/c/dir/x/y.json?${SAS}`);
    expect(joinUri(AZ_PATH_STYLE, "a b.json")).toBe(`http://127.0.0.1:10000/devstoreaccount1/container/dir/a%20b.json?${SAS}`);
  });

  it("works for file, Windows file and s3 prefixes", () => {
    expect(joinUri("file:///state/", "x/y.json")).toBe("file:///state/x/y.json");
    expect(joinUri("file:///state/", "a b#1.json")).toBe("file:///state/a%20b%231.json");
    expect(parseStorageUri(joinUri("file:///state/", "a b#1.json"))).toEqual({ kind: "file", path: "/state/a b#1.json" });
    expect(joinUri("file:///C:/out/", "redacted.mp4")).toBe("file:///C:/out/redacted.mp4");
    expect(joinUri("s3://b/state/", "thumbs/1.jpg")).toBe("s3://b/state/thumbs/1.jpg");
    expect(joinUri("s3://b/state/", "sub/")).toBe("s3://b/state/sub/");
    expect(joinUri("file:///state/", "")).toBe("file:///state/");
  });

  it("refuses non-prefixes and escaping names", () => {
    expect(() => joinUri("s3://b/file.json", "x")).toThrow(/prefix/);
    expect(() => joinUri("s3://b/", "../x")).toThrow(/invalid relative name/);
    expect(() => joinUri("s3://b/", "/x")).toThrow(/invalid relative name/);
  });
});

describe("uriProblem", () => {
  it("accepts every input form", () => {
    for (const uri of ["https://example.com/v.mp4", "http://10.0.0.1:8080/v.mp4", "file:///data/v.mp4", "file:///C:/v.mp4", "s3://b/v.mp4", "s3://b/state/", AZ, AZ_PATH_STYLE]) {
      expect(uriProblem(uri, "input"), uri).toBeNull();
    }
  });

  it("accepts output forms and refuses plain http for output", () => {
    for (const uri of ["file:///out/v.mp4", "file:///C:/out/", "s3://b/out/", AZ]) expect(uriProblem(uri, "output"), uri).toBeNull();
    const p = uriProblem("https://example.com/out.mp4", "output");
    expect(p).toMatch(/cannot be written/);
    expect(p).toContain("must be one of file:///<path>, file:///C:/<path>, s3://<bucket>/<key>, or an Azure blob URL with a SAS signature");
  });

  it("refuses other schemes and relative or bare paths", () => {
    expect(uriProblem("ftp://host/v.mp4", "input")).toMatch(/"ftp:" is not supported.*must be one of an http\(s\) URL/);
    expect(uriProblem("ftp://host/v.mp4", "output")).toMatch(/must be one of file:\/\/\/<path>/);
    expect(uriProblem("videos/v.mp4", "input")).toMatch(/relative paths are not accepted/);
    expect(uriProblem("./v.mp4", "output")).toMatch(/relative paths are not accepted/);
    expect(uriProblem("/data/v.mp4", "input")).toMatch(/file:\/\/\/<absolute path>/);
    expect(uriProblem("C:\\videos\\v.mp4", "input")).toMatch(/file:\/\/\/C:\/<path>/);
    expect(uriProblem("file://relative/v.mp4", "input")).toMatch(/must be absolute/);
    expect(uriProblem("file:v.mp4", "input")).toMatch(/must be absolute/);
    expect(uriProblem("s3://bucket", "output")).toMatch(/s3:\/\/<bucket>\/<key>/);
    expect(uriProblem("", "input")).toMatch(/empty/);
    expect(uriProblem("https://acct.blob.core.windows.net/?sv=1&sig=x", "output")).toMatch(/container/);
  });
});

describe("redactUri", () => {
  it("hides sig and other secret-looking values, keeps the rest", () => {
    const r = redactUri(AZ);
    expect(r).not.toContain("c2VjcmV0U2lnbmF0dXJl");
    expect(r).toContain("sig=REDACTED");
    expect(r).toContain("sv=2025-11-05");
    expect(r.startsWith("https://acct.blob.core.windows.net/container/dir/video.mp4?")).toBe(true);
    expect(redactUri("https://h/v.mp4?X-Amz-Signature=abc&X-Amz-Credential=AK%2F1&X-Amz-Security-Token=t&a=1#f")).toBe(
      "https://h/v.mp4?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED&X-Amz-Security-Token=REDACTED&a=1#f",
    );
    expect(redactUri("https://user:pa55@h/v.mp4?api_key=k")).toBe("https://user:REDACTED@h/v.mp4?api_key=REDACTED");
    expect(redactUri("s3://b/k")).toBe("s3://b/k");
    expect(redactUri("file:///x/y")).toBe("file:///x/y");
  });
});
