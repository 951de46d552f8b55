import assert from "node:assert/strict";
import { execFile, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { compileCache, compileCacheDir } from "../../../src/workbench/compile-cache.ts";
import { runtimeEnv } from "../../../src/workbench/index.ts";
import { workbenchTuning } from "../../../src/workbench/tuning.ts";
import { OtherAccount } from "../../helpers/other-account.ts";
import { node24 } from "../../helpers/peers.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

const tmp = tmpdirFixture({ prefix: "ccb-compile-cache-" });
after(() => tmp.cleanup());
const pExecFile = promisify(execFile);
const root = new URL("../../..", import.meta.url).pathname;
const isRoot = process.getuid?.() === 0;
const OTHER_UID = 65534; // nobody

let n = 0;
/** A fresh home-like folder for one case. */
function home(): string {
  const h = join(tmp.path, `h${n++}`);
  mkdirSync(h, { mode: 0o700 });
  return h;
}
const on = (env: NodeJS.ProcessEnv) => workbenchTuning({ ...env, CCB_WORKBENCH_TUNING: "+compile-cache" });
const off = (env: NodeJS.ProcessEnv) => workbenchTuning({ ...env, CCB_WORKBENCH_TUNING: "-compile-cache" });

describe("the compile-cache lever", () => {
  test("on: the runtime's environment carries NODE_COMPILE_CACHE, a 0700 folder of the user's in ccb's cache; off: none at all", () => {
    const h = home();
    const env = { PATH: "/bin", XDG_CACHE_HOME: join(h, "cache") };
    const got = runtimeEnv(env, on(env));
    const dir = join(h, "cache/ccb/node-compile-cache");
    assert.equal(got.NODE_COMPILE_CACHE, dir);
    assert.equal(got.NODE_DISABLE_COMPILE_CACHE, undefined);
    const st = lstatSync(dir);
    assert.ok(st.isDirectory());
    assert.equal(st.mode & 0o777, 0o700);
    assert.equal(st.uid, process.getuid?.());

    const h2 = home();
    const env2 = { PATH: "/bin", XDG_CACHE_HOME: join(h2, "cache") };
    const none = runtimeEnv(env2, off(env2));
    assert.equal(none.NODE_COMPILE_CACHE, undefined);
    assert.equal(
      none.NODE_DISABLE_COMPILE_CACHE,
      "1",
      "off: no cache, not even tsserver's own in the shared /tmp/node-compile-cache",
    );
    assert.ok(!existsSync(join(h2, "cache/ccb/node-compile-cache")), "off makes no folder");
    assert.equal(compileCacheDir({ CCB_COMPILE_CACHE_DIR: join(h2, "elsewhere") }), join(h2, "elsewhere"));
  });

  test("a folder others can write is refused (the cache off for the runtime), and left as it is; the same folder made 0700 is used", () => {
    const dir = join(home(), "cc");
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o770); // group-writable: a group member could plant entries
    const env = { CCB_COMPILE_CACHE_DIR: dir };
    const refused = compileCache(env, true);
    assert.equal(refused.env.NODE_COMPILE_CACHE, undefined);
    assert.equal(refused.env.NODE_DISABLE_COMPILE_CACHE, "1", "not tsserver's default in the shared /tmp either");
    assert.match(refused.refused ?? "", /mode 0700/);
    assert.equal(lstatSync(dir).mode & 0o777, 0o770, "not chmod-ed behind the person's back");
    chmodSync(dir, 0o700); // positive control
    assert.deepEqual(compileCache(env, true).env, { NODE_COMPILE_CACHE: dir });
  });

  test("a symlink (to a folder of the user's own, even) and a parent others can rename it out of are refused; a sticky parent is not", () => {
    const h = home();
    const real = join(h, "real");
    mkdirSync(real, { mode: 0o700 });
    symlinkSync(real, join(h, "link"));
    assert.match(compileCache({ CCB_COMPILE_CACHE_DIR: join(h, "link") }, true).refused ?? "", /0700/);
    const open = join(h, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    const inOpen = compileCache({ CCB_COMPILE_CACHE_DIR: join(open, "cc") }, true);
    assert.match(inOpen.refused ?? "", /parent .* another user/);
    chmodSync(open, 0o1777); // like /tmp: others cannot rename what is not theirs
    assert.deepEqual(compileCache({ CCB_COMPILE_CACHE_DIR: join(open, "cc") }, true).env, {
      NODE_COMPILE_CACHE: join(open, "cc"),
    });
  });

  test("a 0700 folder owned by another user is refused; the same folder given back is used", { skip: !isRoot }, () => {
    const dir = join(home(), "theirs");
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, OTHER_UID, OTHER_UID);
    const refused = compileCache({ CCB_COMPILE_CACHE_DIR: dir }, true);
    assert.match(refused.refused ?? "", /owned by you/);
    assert.equal(refused.env.NODE_COMPILE_CACHE, undefined);
    chownSync(dir, process.getuid?.() as number, process.getgid?.() as number);
    assert.deepEqual(compileCache({ CCB_COMPILE_CACHE_DIR: dir }, true).env, { NODE_COMPILE_CACHE: dir });
  });

  test("another local account cannot plant an entry in the folder the lever makes; in a folder open to all it can (control)", {
    skip: !isRoot,
  }, () => {
    const other = OtherAccount.create("ccbcc");
    // a parent every account can traverse, as a home or ~/.cache usually is
    const base = mkdtempSync(join(tmpdir(), "ccb-cc-attack-"));
    try {
      chmodSync(base, 0o755);
      const dir = join(base, "cache/ccb/node-compile-cache");
      assert.equal(compileCache({ CCB_COMPILE_CACHE_DIR: dir }, true).env.NODE_COMPILE_CACHE, dir);
      chmodSync(join(base, "cache"), 0o755);
      chmodSync(join(base, "cache/ccb"), 0o755);
      mkdirSync(join(dir, "v24-tag"), { mode: 0o755 }); // as Node makes its version folder (0777 & umask)
      const plant = (target: string) =>
        spawnSync("runuser", ["-u", other.name, "--", "/bin/sh", "-c", `echo evil > "${target}/deadbeef"`], {
          encoding: "utf8",
        });
      assert.notEqual(plant(join(dir, "v24-tag")).status, 0, "the other account could not write");
      assert.ok(!existsSync(join(dir, "v24-tag/deadbeef")));
      const open = join(base, "open");
      mkdirSync(open);
      chmodSync(open, 0o777); // control: the same account and command write where they may
      const control = plant(open);
      assert.equal(control.status, 0, control.stderr);
      assert.ok(existsSync(join(open, "deadbeef")));
    } finally {
      rmSync(base, { recursive: true, force: true });
      other.remove();
    }
  });

  test("above its size bound the folder is emptied before a start; below, kept", () => {
    const dir = join(home(), "cc");
    const env = { CCB_COMPILE_CACHE_DIR: dir };
    compileCache(env, true);
    mkdirSync(join(dir, "v24-tag"));
    writeFileSync(join(dir, "v24-tag/0000abcd"), Buffer.alloc(2048));
    compileCache(env, true, 4096);
    assert.ok(existsSync(join(dir, "v24-tag/0000abcd")), "below the bound");
    compileCache(env, true, 1024);
    assert.deepEqual(readdirSync(dir), [], "above it");
    assert.equal(lstatSync(dir).mode & 0o777, 0o700, "the folder itself stays");
  });
});

describe("the runtime's Node with the lever's environment", () => {
  test("writes entries into the folder and reads them back on the next run; refused, tsserver's own enableCompileCache() is off too", async () => {
    const h = home();
    const env = { PATH: process.env.PATH ?? "/bin", XDG_CACHE_HOME: join(h, "cache") };
    const renv = runtimeEnv(env, on(env));
    const mod = join(h, "m.cjs");
    writeFileSync(mod, `module.exports = ${JSON.stringify("x".repeat(1000))}.length;\n`);
    const run = () =>
      pExecFile(node24(), [mod], { env: { ...renv, NODE_DEBUG_NATIVE: "COMPILE_CACHE" }, encoding: "utf8" });
    await run();
    const tags = readdirSync(renv.NODE_COMPILE_CACHE as string);
    assert.equal(tags.length, 1);
    assert.match(tags[0] as string, /^v24\.[\d.]+-\w+-[0-9a-f]{8}-\d+$/);
    assert.ok(readdirSync(join(renv.NODE_COMPILE_CACHE as string, tags[0] as string)).length > 0);
    const second = await run();
    assert.match(second.stderr, /reading cache from .* success/);

    // refused: what tsserver does first (typescript/lib/tsserver.js) finds the cache disabled
    const bad = join(h, "bad");
    mkdirSync(bad, { mode: 0o700 });
    chmodSync(bad, 0o777);
    const benv = runtimeEnv({ ...env, CCB_COMPILE_CACHE_DIR: bad }, on(env));
    const probe = `const m = require("node:module"); const r = m.enableCompileCache(${JSON.stringify(join(h, "tsserver-default"))}); console.log(r.status === m.constants.compileCacheStatus.DISABLED)`;
    const { stdout } = await pExecFile(node24(), ["-e", probe], { env: benv, encoding: "utf8" });
    assert.equal(stdout.trim(), "true");
    assert.ok(!existsSync(join(h, "tsserver-default")));
    // control: without the refusal the same call enables it
    const { stdout: enabled } = await pExecFile(node24(), ["-e", probe], { env, encoding: "utf8" });
    assert.equal(enabled.trim(), "false");
  });

  test("an extension host or tsserver killed by SIGTERM/SIGKILL has written its cache (flushCompileCacheSoon); without it, nothing", async () => {
    const h = home();
    const helper = join(root, "extension/src/compile-cache.ts");
    const mod = join(h, "big.cjs");
    writeFileSync(mod, `module.exports = function f() { return ${JSON.stringify("y".repeat(2000))}; };\n`);
    const script = (flush: boolean) =>
      `const { flushCompileCacheSoon } = await import(${JSON.stringify(helper)}); ${flush ? "flushCompileCacheSoon();" : ""}
       const require = (await import("node:module")).createRequire(import.meta.url);
       // loaded after the entry module (Node writes the entry's own graph once it has run), as an extension is
       setTimeout(() => require(${JSON.stringify(mod)}), 200);
       setInterval(() => {}, 1000);`;
    // Both run side by side until the flushing one has written more than the other (the flush is
    // 3 s after the helper loaded, which under load came after a fixed 3.8 s kill: CI-like load, 3 of
    // 5), then both are killed at once; a flush that never comes fails here after 60 s.
    const start = (flush: boolean) => {
      const dir = join(h, flush ? "with" : "without");
      const child = spawn(node24(), ["--input-type=module", "-e", script(flush)], {
        env: { PATH: process.env.PATH ?? "/bin", NODE_COMPILE_CACHE: dir },
        stdio: "ignore",
      });
      const exited = once(child, "exit");
      const entries = () =>
        existsSync(dir) ? readdirSync(dir).flatMap((tag) => readdirSync(join(dir, tag))) : ([] as string[]);
      return { child, exited, entries };
    };
    const withFlush = start(true);
    const without = start(false);
    const deadline = Date.now() + 60_000;
    while (withFlush.entries().length <= without.entries().length && Date.now() < deadline) await sleep(200);
    // from outside: Node's own process.kill(process.pid) writes the cache first
    for (const c of [withFlush, without]) c.child.kill("SIGKILL");
    await Promise.all([withFlush.exited, without.exited]);
    const [w, wo] = [withFlush.entries(), without.entries()];
    assert.ok(
      w.length > wo.length,
      `the later module's entry written before the kill (${w.length} vs ${wo.length} entries)`,
    );
  });
});
