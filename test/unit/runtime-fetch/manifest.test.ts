import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { isCcbError } from "../../../src/core/errors.ts";
import { ccbCacheDir } from "../../../src/runtime-fetch/cache.ts";
import { displayUrl } from "../../../src/runtime-fetch/fetch.ts";
import {
  hostRuntimePlatform,
  loadManifest,
  mirrorUrl,
  PINNED_MANIFEST,
  resolveManifest,
  runtimeManifestSchema,
} from "../../../src/runtime-fetch/manifest.ts";
import { createProgress } from "../../../src/runtime-fetch/progress.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

describe("the pinned manifest", () => {
  test("pins OpenVSCode Server 1.109.5 for three Linux platforms with the published digests and sizes", () => {
    assert.equal(PINNED_MANIFEST.version, "1.109.5");
    assert.equal(PINNED_MANIFEST.releaseTag, "openvscode-server-v1.109.5");
    const want = {
      "linux-x64": ["b433bf4f0227321a7014d8460d10a8f958adc0f45aa79bd889e84e65e8f88363", 76_686_959],
      "linux-arm64": ["36d9c14036489b63de84ebace837fcacf7e60e669a0dc715802c5443684ea4dc", 74_488_835],
      "linux-armhf": ["f84ac0dcea0bdeac07e172e58903b38bc5ef0ac94b0bf2ab2ce4eca325ab98bb", 68_994_573],
    } as const;
    assert.deepEqual(Object.keys(PINNED_MANIFEST.assets).sort(), Object.keys(want).sort());
    for (const [p, [sha, size]] of Object.entries(want)) {
      const a = PINNED_MANIFEST.assets[p as keyof typeof want];
      assert.ok(a);
      assert.equal(a.sha256, sha);
      assert.equal(a.size, size);
      assert.equal(
        a.url,
        `https://github.com/gitpod-io/openvscode-server/releases/download/openvscode-server-v1.109.5/openvscode-server-v1.109.5-${p}.tar.gz`,
      );
      assert.equal(a.topLevelDir, `openvscode-server-v1.109.5-${p}`);
    }
    assert.equal(runtimeManifestSchema.safeParse(PINNED_MANIFEST).success, true);
  });

  test("a mirror URL is <mirror>/<release tag>/<asset file name>", () => {
    const a = PINNED_MANIFEST.assets["linux-arm64"];
    assert.ok(a);
    assert.equal(
      mirrorUrl("https://mirror.example/gh/", PINNED_MANIFEST, a),
      "https://mirror.example/gh/openvscode-server-v1.109.5/openvscode-server-v1.109.5-linux-arm64.tar.gz",
    );
    assert.throws(
      () => mirrorUrl("ftp://x", PINNED_MANIFEST, a),
      (e: unknown) => isCcbError(e, "INVALID_ARGUMENT"),
    );
    assert.throws(
      () => mirrorUrl("not a url", PINNED_MANIFEST, a),
      (e: unknown) => isCcbError(e, "INVALID_ARGUMENT"),
    );
  });

  test("CCB_RUNTIME_MANIFEST loads a JSON manifest; invalid ones are CONFIG_INVALID", async () => {
    await using d = tmpdirFixture();
    const good = join(d.path, "m.json");
    writeFileSync(good, JSON.stringify({ ...PINNED_MANIFEST, version: "9.9.9" }));
    assert.equal(resolveManifest({ CCB_RUNTIME_MANIFEST: good }).version, "9.9.9");
    assert.equal(resolveManifest({}), PINNED_MANIFEST);
    const bad = join(d.path, "bad.json");
    const badAsset = { ...PINNED_MANIFEST.assets["linux-x64"], topLevelDir: "../escape" };
    writeFileSync(bad, JSON.stringify({ ...PINNED_MANIFEST, assets: { "linux-x64": badAsset } }));
    assert.throws(
      () => loadManifest(bad),
      (e: unknown) => isCcbError(e, "CONFIG_INVALID") && /topLevelDir/.test(e.message),
    );
    assert.throws(
      () => loadManifest(join(d.path, "missing.json")),
      (e: unknown) => isCcbError(e, "CONFIG_INVALID"),
    );
  });
});

describe("platform and cache location", () => {
  test("Linux x64 / arm64 / arm map to the three builds; others have none", () => {
    assert.equal(hostRuntimePlatform({ platform: "linux", arch: "x64" }), "linux-x64");
    assert.equal(hostRuntimePlatform({ platform: "linux", arch: "arm64" }), "linux-arm64");
    assert.equal(hostRuntimePlatform({ platform: "linux", arch: "arm" }), "linux-armhf");
    assert.equal(hostRuntimePlatform({ platform: "linux", arch: "ppc64" }), undefined);
    assert.equal(hostRuntimePlatform({ platform: "darwin", arch: "arm64" }), undefined);
    assert.equal(hostRuntimePlatform({ platform: "win32", arch: "x64" }), undefined);
  });

  test("CCB_CACHE_DIR overrides, then an absolute XDG_CACHE_HOME, then ~/.cache", () => {
    assert.equal(ccbCacheDir({ CCB_CACHE_DIR: "/c", XDG_CACHE_HOME: "/x" }), "/c");
    assert.equal(ccbCacheDir({ XDG_CACHE_HOME: "/x" }), "/x/ccb");
    assert.equal(ccbCacheDir({ XDG_CACHE_HOME: "relative" }), join(homedir(), ".cache/ccb"));
    assert.equal(ccbCacheDir({}), join(homedir(), ".cache/ccb"));
  });

  test("URLs in messages lose credentials and query strings", () => {
    assert.equal(
      displayUrl("https://user:secret@mirror.example/a/b.tar.gz?token=abc"),
      "https://mirror.example/a/b.tar.gz",
    );
  });
});

describe("progress display", () => {
  test("a TTY gets one line redrawn in place: phase, bytes, elapsed time; a finished line at the end", () => {
    let out = "";
    let t = 0;
    const p = createProgress({ isTTY: true, columns: 100, write: (s: string) => (out += s) }, "fetch", () => t);
    p.update({ phase: "download", received: 0, total: 100 * 1024 * 1024 });
    t = 50;
    p.update({ phase: "download", received: 10 * 1024 * 1024, total: 100 * 1024 * 1024 }); // under 100 ms: skipped
    t = 65_000;
    p.update({ phase: "download", received: 100 * 1024 * 1024, total: 100 * 1024 * 1024 });
    p.update({ phase: "extract", detail: "the archive" });
    p.update({ phase: "done" });
    p.end();
    const frames = out.split("\r").filter((f) => f && f !== "\x1b[K");
    assert.match(frames[0] as string, /^fetch: download \[-{20}\] 0% \(0\.0 of 100\.0 MB\) · 0 s\x1b\[K$/);
    assert.match(frames[1] as string, /^fetch: download \[#{20}\] 100% \(100\.0 of 100\.0 MB\) · 1 min 05 s/);
    assert.match(frames[2] as string, /^fetch: extract: the archive · 1 min 05 s/);
    assert.ok(frames.length <= 5, frames.join("|"));
    assert.ok(out.endsWith("\n"));
    assert.equal(out.split("\n").length, 2, "one line on screen");
  });

  test("a TTY line never wraps: cut to the terminal's width", () => {
    let out = "";
    const p = createProgress({ isTTY: true, columns: 30, write: (s: string) => (out += s) }, "fetch");
    p.update({ phase: "build", step: 3, item: "a-package-with-a-very-long-name-indeed" });
    p.end();
    for (const f of out.split("\r")) assert.ok(f.replace("\x1b[K", "").replace("\n", "").length <= 29, f);
  });

  test("a pipe gets plain lines: one per phase, one per 10% of a download, one per build step", () => {
    const lines: string[] = [];
    const p = createProgress({ isTTY: false, write: (s: string) => lines.push(s) }, "fetch");
    for (let i = 0; i <= 1000; i += 7) p.update({ phase: "download", received: i, total: 1000 });
    p.update({ phase: "download", received: 1000, total: 1000 });
    p.update({ phase: "build", detail: "native modules" });
    p.update({ phase: "build", step: 1, item: "kerberos" });
    p.update({ phase: "build", step: 1, item: "kerberos" });
    p.update({ phase: "build", step: 2, item: "node-pty" });
    p.update({ phase: "done" });
    p.end();
    assert.deepEqual(
      lines.filter((l) => l.includes("%")).map((l) => /(\d+)%/.exec(l)?.[1]),
      ["0", "10", "20", "30", "40", "50", "60", "70", "80", "90", "100"],
    );
    assert.ok(lines.some((l) => /^fetch: build native modules: native modules \(\d+ s\)\n$/.test(l)));
    assert.deepEqual(
      lines.filter((l) => /step/.test(l)).map((l) => l.replace(/ \(\d+ s\)/, "")),
      ["fetch: build native modules step 1, kerberos\n", "fetch: build native modules step 2, node-pty\n"],
    );
    assert.match(lines.at(-1) as string, /^fetch: done in \d+ s\n$/);
    assert.ok(lines.every((l) => l.endsWith("\n") && !l.includes("\r") && !l.includes("\x1b")));
  });

  test("a log line on a TTY clears the progress line first and redraws it after", () => {
    let out = "";
    const p = createProgress({ isTTY: true, columns: 80, write: (s: string) => (out += s) }, "fetch");
    p.update({ phase: "extract" });
    const logged: string[] = [];
    const log = {
      debug() {},
      info: (m: string) => {
        out += `LOG ${m}\n`;
        logged.push(m);
      },
      warn() {},
      error() {},
      child() {
        return log;
      },
    };
    p.around(log).child("x").info("hello");
    p.end();
    assert.deepEqual(logged, ["hello"]);
    assert.match(out, /\r\x1b\[KLOG hello\n\rfetch: extract/);
  });
});
