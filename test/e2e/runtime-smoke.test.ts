// Part of the smoke suite that `npm test` also runs against the Bun-compiled binary: the fetcher
// (fetch streaming, tar, zlib, rename) must work in the single executable, not only under Node.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { FIXTURE_FILE, FIXTURE_TAG, FIXTURE_TOP, fixtureSet } from "../fixtures/runtime/archives.ts";
import { startMirror } from "../fixtures/runtime/mirror.ts";
import { runCcb } from "../helpers/cli.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

test("ccb runtime: fetch from a mirror installs a verified runtime; a tampered one is refused", async () => {
  const fx = fixtureSet();
  await using d = tmpdirFixture({ prefix: "ccb-runtime-smoke-" });
  const mirror = await startMirror({
    [`/good/${FIXTURE_TAG}/${FIXTURE_FILE}`]: { body: fx.good },
    [`/bad/${FIXTURE_TAG}/${FIXTURE_FILE}`]: { body: fx.tampered },
  });
  try {
    const manifest = join(d.path, "manifest.json");
    writeFileSync(manifest, JSON.stringify(fx.manifest));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      CCB_CACHE_DIR: join(d.path, "cache"),
      CCB_RUNTIME_MANIFEST: manifest,
    };
    delete env.CCB_RUNTIME_MIRROR;
    const bad = await runCcb(["runtime", "fetch", "--mirror", `${mirror.url}/bad`, "--json"], {
      env,
      timeoutMs: 60_000,
    });
    assert.equal(bad.code, 1);
    assert.equal(JSON.parse(bad.stdout).error.code, "INTEGRITY_FAILED");
    const good = await runCcb(["runtime", "fetch", "--mirror", `${mirror.url}/good`, "--json"], {
      env,
      timeoutMs: 60_000,
    });
    assert.equal(good.code, 0, good.stderr);
    assert.equal(JSON.parse(good.stdout).root, join(d.path, "cache", "runtime", FIXTURE_TOP));
    const path = await runCcb(["runtime", "path"], { env, timeoutMs: 60_000 });
    assert.equal(path.stdout.trim(), join(d.path, "cache", "runtime", FIXTURE_TOP));
  } finally {
    await mirror.close();
  }
});
