/**
 * Guide downloads and images from `<data>/guide/` (issue 17 §3): the catalog's files are served
 * with their type and caching over real HTTP, nothing else under or outside the folder is, and
 * `/api/guide/files` says which are present.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { ApiClient, rawGet, startTestServer, type TestServer } from "../../../tests/harness.ts";
import { GUIDES, type GuideFile, type GuideInfo } from "./catalog.ts";
import { GUIDE_PATH_PATTERN, GuideFiles } from "./files.ts";

/** What a browser must be told for each extension (written out here, not taken from files.ts). */
const EXPECTED_TYPES: Record<string, string> = {
  exe: "application/vnd.microsoft.portable-executable",
  apk: "application/vnd.android.package-archive",
  dmg: "application/x-apple-diskimage",
  zip: "application/zip",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
};

const extension = (path: string) => path.slice(path.lastIndexOf(".") + 1);
const basename = (path: string) => path.slice(path.lastIndexOf("/") + 1);

/** Writes a file (and its folders) under `root`. */
function put(root: string, path: string, bytes: string | Uint8Array) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), bytes);
}

const guide = (files: GuideFile[]): GuideInfo => ({
  route: "/test_client",
  client: "Test",
  platform: "Windows",
  version: "",
  officialUrl: "https://example.com/",
  files,
});

describe("the catalog", () => {
  test("every guide file path is a safe, unique, lowercase relative path", () => {
    const paths = GUIDES.flatMap((g) => g.files.map((f) => f.path));
    for (const path of paths)
      expect({ path, safe: GUIDE_PATH_PATTERN.test(path) }).toEqual({ path, safe: true });
    expect(new Set(paths).size).toBe(paths.length);
  });
});

describe("GuideFiles over a catalog of its own", () => {
  let root: string;
  let dir: string;
  let clock = 0;
  const CATALOG = [
    guide([
      { path: "test/setup.exe", kind: "installer", label: "安装包" },
      { path: "test/step-1.png", kind: "image", label: "步骤 1" },
      { path: "test/missing.apk", kind: "installer", label: "缺失" },
      { path: "test/out.png", kind: "image", label: "链接到外面" },
      { path: "test/folder", kind: "image", label: "是个目录" },
      // Entries a careless catalog edit could add: the path rule refuses them all the same.
      { path: "../secret.txt", kind: "image", label: "" },
      { path: "TEST/SETUP.EXE", kind: "installer", label: "" },
      { path: "/etc/hostname", kind: "image", label: "" },
      { path: "test//setup.exe", kind: "installer", label: "" },
      { path: "test\\setup.exe", kind: "installer", label: "" },
      { path: "test/setup.exe\0", kind: "installer", label: "" },
    ]),
  ];

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "ferry-guide-"));
    dir = join(root, "guide");
    put(dir, "test/setup.exe", "MZ installer");
    put(dir, "test/step-1.png", "png bytes");
    put(dir, "test/not-listed.exe", "not in the catalog");
    mkdirSync(join(dir, "test/folder"));
    writeFileSync(join(root, "secret.txt"), "outside");
    symlinkSync(join(root, "secret.txt"), join(dir, "test/out.png"));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const files = () => new GuideFiles(dir, CATALOG, () => clock);

  test("finds a present catalog file and nothing else", () => {
    const guideFiles = files();
    expect(guideFiles.find("test/setup.exe")?.size).toBe("MZ installer".length);
    for (const path of [
      "test/missing.apk",
      "test/not-listed.exe",
      "test/out.png",
      "test/folder",
      "../secret.txt",
      "TEST/SETUP.EXE",
      "/etc/hostname",
      "test//setup.exe",
      "test\\setup.exe",
      "test/setup.exe\0",
    ]) {
      expect({ path, found: guideFiles.find(path) }).toEqual({ path, found: null });
    }
  });

  test("present paths are the catalog's present regular files, re-read only after a few seconds", () => {
    const guideFiles = files();
    expect(guideFiles.presentPaths()).toEqual(["test/setup.exe", "test/step-1.png"]);
    put(dir, "test/missing.apk", "apk");
    clock += 1_000;
    expect(guideFiles.presentPaths()).toEqual(["test/setup.exe", "test/step-1.png"]);
    clock += 5_000;
    expect(guideFiles.presentPaths()).toEqual(["test/setup.exe", "test/step-1.png", "test/missing.apk"]);
    rmSync(join(dir, "test/missing.apk"));
  });

  test("status lists every expected file of each guide, present with its size or missing", () => {
    const [status] = files().status();
    expect(status?.route).toBe("/test_client");
    expect(status?.files.slice(0, 4).map((f) => [f.path, f.present, f.size])).toEqual([
      ["test/setup.exe", true, "MZ installer".length],
      ["test/step-1.png", true, "png bytes".length],
      ["test/missing.apk", false, 0],
      ["test/out.png", false, 0],
    ]);
  });

  test("a folder that does not exist yet has no files", () => {
    const guideFiles = new GuideFiles(join(root, "nowhere"), CATALOG);
    expect(guideFiles.presentPaths()).toEqual([]);
    expect(guideFiles.find("test/setup.exe")).toBeNull();
  });
});

describe("GET /guide/* and /api/guide/files with the real catalog", () => {
  let server: TestServer;
  const all = GUIDES.flatMap((g) => g.files);
  const served = (path: string) => EXPECTED_TYPES[extension(path)] !== undefined;
  const installer = all.find((f) => f.kind === "installer" && served(f.path)) as GuideFile;
  const image = all.find((f) => f.kind === "image" && served(f.path)) as GuideFile;
  const others = all.filter((f) => f !== installer && f !== image);
  const missing = others[0] as GuideFile;
  const linkedOut = others[1] as GuideFile;
  const INSTALLER_BYTES = new Uint8Array(200_000).map((_, i) => i % 251);

  const url = (path: string) => `${server.url}/guide/${path}`;

  beforeAll(async () => {
    expect([installer, image, missing, linkedOut].every(Boolean)).toBe(true);
    server = await startTestServer();
    const dir = join(server.dataDir, "guide");
    put(dir, installer.path, INSTALLER_BYTES);
    put(dir, image.path, "image bytes");
    put(dir, "not-in-catalog.exe", "MZ not listed");
    put(dir, `${dirname(installer.path)}/extra.png`, "not listed either");
    put(dir, linkedOut.path, "");
    rmSync(join(dir, linkedOut.path));
    const link = join(dir, linkedOut.path);
    symlinkSync(relative(dirname(link), join(server.dataDir, "ferry.db")), link);
  });
  afterAll(() => server?.close());

  test("an installer is a download of its type, cached a day, with validators", async () => {
    const response = await fetch(url(installer.path));
    expect(response.status).toBe(200);
    expect(
      Object.fromEntries(
        [
          "content-type",
          "x-content-type-options",
          "cache-control",
          "content-disposition",
          "content-length",
        ].map((h) => [h, response.headers.get(h)]),
      ),
    ).toEqual({
      "content-type": EXPECTED_TYPES[extension(installer.path)] as string,
      "x-content-type-options": "nosniff",
      "cache-control": "public, max-age=86400",
      "content-disposition": `attachment; filename="${basename(installer.path)}"`,
      "content-length": String(INSTALLER_BYTES.length),
    });
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(INSTALLER_BYTES);
    expect(response.headers.get("etag")).toBeTruthy();
    expect(response.headers.get("last-modified")).toBeTruthy();
  });

  test("a step image is shown inline with its type", async () => {
    const response = await fetch(url(image.path));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(EXPECTED_TYPES[extension(image.path)] as string);
    expect(response.headers.get("content-disposition")).toBe("inline");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await response.text()).toBe("image bytes");
  });

  test("a repeat visit with the ETag or the date gets 304 and no body", async () => {
    const first = await fetch(url(installer.path));
    await first.arrayBuffer();
    const etag = first.headers.get("etag") as string;
    const byTag = await fetch(url(installer.path), { headers: { "if-none-match": etag } });
    expect(byTag.status).toBe(304);
    expect(await byTag.text()).toBe("");
    const byDate = await fetch(url(installer.path), {
      headers: { "if-modified-since": first.headers.get("last-modified") as string },
    });
    expect(byDate.status).toBe(304);
    const otherTag = await fetch(url(installer.path), { headers: { "if-none-match": '"other"' } });
    expect(otherTag.status).toBe(200);
    await otherTag.arrayBuffer();
  });

  test("HEAD gives the headers without the body; a range resumes a download", async () => {
    const head = await fetch(url(installer.path), { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(INSTALLER_BYTES.length));
    expect(head.headers.get("content-disposition")).toStartWith("attachment");
    expect(await head.text()).toBe("");

    const part = await fetch(url(installer.path), { headers: { range: "bytes=100-199" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 100-199/${INSTALLER_BYTES.length}`);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(INSTALLER_BYTES.slice(100, 200));
    const beyond = await fetch(url(installer.path), { headers: { range: "bytes=999999-" } });
    expect(beyond.status).toBe(416);
  });

  test("a catalog file that is not there is 404 and not listed as present", async () => {
    const response = await fetch(url(missing.path));
    expect(response.status).toBe(404);
    const answer = await new ApiClient(server.url).call<string[]>("/api/guide/files", {});
    expect(answer.code).toBe(0);
    expect(answer.data.toSorted()).toEqual([installer.path, image.path].toSorted());
  });

  test("files in the folder that the catalog does not list are never served", async () => {
    for (const path of ["not-in-catalog.exe", `${dirname(installer.path)}/extra.png`]) {
      const response = await fetch(url(path));
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
      expect(await response.text()).not.toContain("listed");
    }
  });

  test("a catalog name that is a symlink out of the folder is refused", async () => {
    const response = await fetch(url(linkedOut.path));
    expect(response.status).toBe(404);
    expect(await response.text()).not.toContain("SQLite format 3");
  });

  test("escapes, encodings, absolute paths, backslashes, NUL and case variants are 404 and read nothing", async () => {
    writeFileSync(join(server.dataDir, "secret.txt"), "TOP SECRET");
    const upper = installer.path.toUpperCase();
    const attempts = [
      "/guide/../ferry.db",
      "/guide/../secret.txt",
      "/guide/%2e%2e/secret.txt",
      "/guide/%2E%2E%2Fsecret.txt",
      "/guide/..%2fsecret.txt",
      "/guide/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
      "/guide//etc/passwd",
      "/guide/%2fetc%2fpasswd",
      `/guide/${server.dataDir}/secret.txt`,
      `/guide/${encodeURIComponent(`${server.dataDir}/secret.txt`)}`,
      "/guide/..\\secret.txt",
      "/guide/..%5csecret.txt",
      `/guide/${installer.path}%00`,
      `/guide/${installer.path}%00.png`,
      `/guide/${upper}`,
      `/guide/${encodeURIComponent(installer.path)}`.replace("%2F", "%2f"),
      "/guide/%ff",
    ];
    for (const path of attempts) {
      const { status, text } = await rawGet(server, path);
      expect({ path, status }).toEqual({ path, status: 404 });
      expect(text).not.toContain("TOP SECRET");
      expect(text).not.toContain("SQLite format 3");
      expect(text).not.toContain("root:");
    }
  });
});
