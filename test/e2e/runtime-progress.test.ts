// What a newcomer sees while a runtime installs, and when its download is blocked. The install is
// `ccb runtime fetch --runtime code-server` for real (npm pack, integrity check, npm install with
// foreground scripts) against a local registry (verdaccio) serving small stand-ins for code-server
// and its Node (CCB_CODE_SERVER_PIN names them with their integrity), whose install scripts print
// compiler output the way node-gyp does and can be made to fail.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fixtureSet } from "../fixtures/runtime/archives.ts";
import { ccbCommand, runCcb } from "../helpers/cli.ts";
import { freePort, type LocalRegistry, startLocalRegistry } from "../helpers/local-registry.ts";
import { cleanEnv } from "../helpers/serve.ts";
import { homeEnv, tmpdirFixture } from "../helpers/tmp.ts";
import { TmuxPane } from "../helpers/tmux.ts";

/** What a compiler and npm print during a native build: none of it may reach the person's terminal. */
const NOISE = /warning:|note:|In file included from|npm (notice|warn)|gyp|fatal error/;

const BUILD_JS = `const name = require("./package.json").name;
for (let i = 1; i <= 80; i++) {
  const out = i % 3 === 0 ? process.stderr : process.stdout;
  out.write(\`In file included from ../src/\${name}.cc:\${i}:\\n\`);
  out.write(\`../src/\${name}.cc:\${i}:7: warning: unused variable 'x\${i}' [-Wunused-variable]\\n\`);
  out.write(\`../src/\${name}.cc:\${i}:7: note: noise line \${i} of \${name}\\n\`);
}
if (process.env.CCB_TEST_BUILD_FAIL === name) {
  process.stderr.write(\`../src/\${name}.cc:99:10: fatal error: gssapi/gssapi.h: No such file or directory\\n\`);
  process.stderr.write(\`gyp ERR! build error of \${name}\\n\`);
  process.exit(1);
}
`;

const fx = fixtureSet();
let d: ReturnType<typeof tmpdirFixture>;
let registry: LocalRegistry;
let pinFile: string;
let n = 0;

function pkg(name: string, version: string, json: Record<string, unknown>, files: Record<string, string>): string {
  const dir = join(d.path, "pkgs", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version, ...json }, null, 2));
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(join(dir, f, ".."), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  return dir;
}

before(async () => {
  d = tmpdirFixture({ prefix: "ccb-rt-progress-" });
  registry = await startLocalRegistry(join(d.path, "registry"));
  const env = { ...cleanEnv(), ...homeEnv(join(d.path, "publisher")) };
  const nodeDir = pkg(
    "fake-node",
    "24.0.0",
    { bin: { node: "bin/node" } },
    { "bin/node": `#!/bin/sh\nexec '${process.execPath}' "$@"\n` },
  );
  chmodSync(join(nodeDir, "bin/node"), 0o755);
  const native = pkg("fake-native-a", "1.0.0", { scripts: { install: "node build.js" } }, { "build.js": BUILD_JS });
  const cs = pkg(
    "fake-code-server",
    "1.0.0",
    { dependencies: { "fake-native-a": "1.0.0" }, scripts: { postinstall: "node build.js" } },
    { "build.js": BUILD_JS, "out/node/entry.js": "console.log('fake code-server');\n" },
  );
  const nodeIntegrity = registry.publish(nodeDir, env);
  registry.publish(native, env);
  const csIntegrity = registry.publish(cs, env);
  pinFile = join(d.path, "pin.json");
  writeFileSync(
    pinFile,
    JSON.stringify({
      codeServer: { name: "fake-code-server", version: "1.0.0", integrity: csIntegrity },
      node: {
        [`${process.platform}-${process.arch}`]: { name: "fake-node", version: "24.0.0", integrity: nodeIntegrity },
      },
    }),
  );
});

after(() => {
  registry?.close();
  d?.cleanup();
});

/** A person's environment with a private home, npm pointed at the local registry, and the stand-in pins. */
function person(extra: Record<string, string> = {}) {
  const home = join(d.path, `home${++n}`);
  const env = {
    ...cleanEnv(),
    ...homeEnv(home),
    npm_config_userconfig: registry.npmrc,
    CCB_CODE_SERVER_PIN: pinFile,
    ...extra,
  };
  return { home, env, logs: join(home, "state/ccb/logs"), runtime: join(home, "cache/ccb/runtime") };
}

describe("ccb runtime fetch --runtime code-server: progress, not a compiler's log", { timeout: 600_000 }, () => {
  test("stderr not a terminal: plain phase lines, no compiler output; stdout names the log, which has it all (0600)", async () => {
    const p = person();
    const r = await runCcb(["runtime", "fetch", "--runtime", "code-server"], { env: p.env, timeoutMs: 300_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, NOISE, "no compiler or npm output on the terminal");
    assert.doesNotMatch(r.stdout, NOISE);
    assert.doesNotMatch(r.stderr, /\r|\x1b/, "plain lines: no redraws, no escapes");
    const lines = r.stderr.trimEnd().split("\n");
    assert.ok(lines.length <= 14, `a handful of lines:\n${r.stderr}`);
    for (const re of [
      /^ccb runtime fetch: download: fake-node@24\.0\.0 and fake-code-server@1\.0\.0 from the npm registry \(\d+ s\)$/m,
      /^ccb runtime fetch: verify: SHA-512 integrity/m,
      /^ccb runtime fetch: extract: Node 24/m,
      /^ccb runtime fetch: build native modules: code-server's dependencies and native modules/m,
      /^ccb runtime fetch: build native modules step 1, fake-native-a \(\d+ s\)$/m,
      /^ccb runtime fetch: build native modules step 2, fake-code-server \(\d+ s\)$/m,
      /^ccb runtime fetch: done in (\d+ min )?\d+ s$/m,
    ])
      assert.match(r.stderr, re);
    const log = /npm's output: (\S+)/.exec(r.stdout)?.[1];
    assert.ok(log, r.stdout);
    assert.equal(join(log, ".."), p.logs, "under ccb's state folder");
    assert.equal(statSync(log).mode & 0o777, 0o600);
    assert.equal(statSync(p.logs).mode & 0o777, 0o700);
    const text = readFileSync(log, "utf8");
    assert.match(text, /fake-native-a\.cc:80:7: warning: unused variable 'x80'/, "the child's stdout is in the log");
    assert.match(text, /fake-code-server\.cc:78:7: note: noise line 78/, "and its stderr");
    assert.match(r.stdout, /^Installed code-server 1\.0\.0 \(.*\) in .*fake-code-server\n/);
  });

  test("a failing build: exit 1, the log's tail (the compiler's last words) and its path, nothing installed", async () => {
    const p = person({ CCB_TEST_BUILD_FAIL: "fake-code-server" });
    const r = await runCcb(["runtime", "fetch", "--runtime", "code-server"], { env: p.env, timeoutMs: 300_000 });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /ccb: npm install exited with 1\. The last lines of its output:\n/);
    assert.match(r.stderr, /fatal error: gssapi\/gssapi\.h: No such file or directory/);
    assert.match(r.stderr, /gyp ERR! build error of fake-code-server/);
    assert.doesNotMatch(r.stderr, /noise line 1 of fake-native-a\b/, "the tail, not the whole log");
    const log = /All of it: (\S+)/.exec(r.stderr)?.[1];
    assert.ok(log && existsSync(log), r.stderr);
    assert.match(readFileSync(log, "utf8"), /noise line 1 of fake-native-a\b/, "the whole output is in the log");
    assert.match(r.stderr, /build-essential/, "what to install");
    assert.deepEqual(readdirSync(p.runtime), [], "nothing installed, no leftovers");
    // The stages before the failure were shown as progress, and the compiler's early output was not.
    assert.match(r.stderr, /^ccb runtime fetch: build native modules step 1, fake-native-a/m);
  });

  test("on a terminal: one line redrawn in place, a handful of lines on screen", async () => {
    const p = person();
    const raw = join(d.path, "tty.raw");
    const { command, args } = ccbCommand(["runtime", "fetch", "--runtime", "code-server"]);
    const quoted = [command, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
    // tmux shows what a person sees; util-linux `script` inside it records the bytes ccb wrote.
    const pane = new TmuxPane(["script", "-qefc", quoted, raw], p.env as Record<string, string>);
    try {
      const screen = await pane.waitFor(/EXIT=\d+/);
      assert.match(screen, /EXIT=0/, screen);
      const shown = screen
        .slice(0, screen.indexOf("EXIT="))
        .trimEnd()
        .split("\n")
        .map((l) => l.trimEnd());
      assert.ok(shown.length <= 6, `a handful of lines:\n${screen}`);
      assert.doesNotMatch(screen, NOISE);
      assert.match(shown[0] as string, /^ccb runtime fetch: done · (\d+ min )?\d+ s$/);
      assert.match(screen, /npm's output: \S+/);
      const bytes = readFileSync(raw, "utf8");
      const frames = bytes.split("\r").map((f) => f.replace(/\x1b\[K/g, ""));
      for (const phase of ["download", "verify", "extract", "build native modules", "done"])
        assert.ok(
          frames.some((f) => f.startsWith(`ccb runtime fetch: ${phase}`)),
          `a redraw shows ${phase}: ${JSON.stringify(bytes.slice(0, 2000))}`,
        );
      assert.doesNotMatch(bytes, NOISE);
    } finally {
      pane.close();
    }
  });
});

describe("ccb runtime fetch: a download that cannot reach its source names the way that works", {
  timeout: 300_000,
}, () => {
  /** The fixture manifest with the archive at `url`. */
  function manifestAt(url: string): string {
    const m = structuredClone(fx.manifest);
    const a = m.assets["linux-x64"];
    assert.ok(a);
    a.url = url;
    const f = join(d.path, `manifest${++n}.json`);
    writeFileSync(f, JSON.stringify(m));
    return f;
  }

  test("GitHub's port closed, the npm registry answers: the npm-registry runtime is named", async () => {
    const closed = await freePort();
    const p = person({ CCB_RUNTIME_MANIFEST: manifestAt(`http://127.0.0.1:${closed}/releases/x.tar.gz`) });
    const r = await runCcb(["runtime", "fetch"], { env: p.env, timeoutMs: 120_000 });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Could not download the runtime: 127\.0\.0\.1:\d+ could not be reached \(ECONNREFUSED\)/);
    assert.match(
      r.stderr,
      new RegExp(
        `your npm registry \\(${registry.url.replace(/[./]/g, "\\$&")}\\) answers: \`ccb runtime fetch --runtime code-server\` installs code-server from it`,
      ),
    );
    assert.match(r.stderr, /--mirror <url>/);
    assert.match(r.stderr, /--from-file <archive>/);
    const j = await runCcb(["runtime", "fetch", "--json"], { env: p.env, timeoutMs: 120_000 });
    const e = JSON.parse(j.stdout).error;
    assert.equal(e.details.npmRegistry, registry.url);
    assert.match(e.hint, /--runtime code-server/);
  });

  test("an unresolvable host, the npm registry answers: the same", async () => {
    const p = person({ CCB_RUNTIME_MANIFEST: manifestAt("https://ccb-test-no-such-host.invalid/x.tar.gz") });
    const r = await runCcb(["runtime", "fetch"], { env: p.env, timeoutMs: 120_000 });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /the name ccb-test-no-such-host\.invalid could not be resolved/);
    assert.match(r.stderr, /`ccb runtime fetch --runtime code-server` installs code-server from it/);
  });

  test("control: the registry does not answer either: no npm-registry runtime, a mirror or an archive", async () => {
    const closed = await freePort();
    const p = person({
      CCB_RUNTIME_MANIFEST: manifestAt(`http://127.0.0.1:${closed}/releases/x.tar.gz`),
      npm_config_registry: `http://127.0.0.1:${closed}/`,
    });
    const r = await runCcb(["runtime", "fetch"], { env: p.env, timeoutMs: 120_000 });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Neither 127\.0\.0\.1:\d+ nor your npm registry \(`npm ping`\) is in reach/);
    assert.doesNotMatch(r.stderr, /--runtime code-server/);
    assert.match(r.stderr, /--mirror <url>[\s\S]*--from-file <archive>/);
  });
});
