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
  test("a TTY gets a redrawn bar ending in a newline", () => {
    let out = "";
    let t = 0;
    const p = createProgress({ isTTY: true, columns: 100, write: (s: string) => (out += s) }, "fetch", () => t);
    p.update({ received: 0, total: 100 });
    t = 50;
    p.update({ received: 10, total: 100 }); // under 100 ms since the last draw: skipped
    t = 500;
    p.update({ received: 100, total: 100 });
    p.done();
    const frames = out.split("\r").filter(Boolean);
    assert.equal(frames.length, 2);
    assert.match(frames[0] as string, /^fetch \[-+\] {3}0% 0\.0\/0\.0 MB/);
    assert.match(frames[1] as string, /^fetch \[#+\] 100% /);
    assert.ok(out.endsWith("\n"));
  });

  test("a pipe gets one plain line per 10%", () => {
    const lines: string[] = [];
    const p = createProgress({ isTTY: false, write: (s: string) => lines.push(s) }, "fetch");
    for (let i = 0; i <= 1000; i += 7) p.update({ received: i, total: 1000 });
    p.update({ received: 1000, total: 1000 });
    p.done();
    assert.deepEqual(
      lines.map((l) => /(\d+)%/.exec(l)?.[1]),
      ["0", "10", "20", "30", "40", "50", "60", "70", "80", "90", "100"],
    );
    assert.ok(lines.every((l) => l.endsWith("\n") && !l.includes("\r")));
  });
});
