import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runCcb } from "../helpers/cli.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

describe("ccb CLI", () => {
  it("--help explains every command", async () => {
    const r = await runCcb(["--help"]);
    assert.equal(r.code, 0);
    for (const c of ["serve", "ide", "acp", "link", "stream", "runtime"])
      assert.match(r.stdout, new RegExp(`\\b${c}\\b`));
  });

  it("flags after `--` belong to the child command, --help included", async () => {
    const home = tmpdirFixture({ prefix: "ccb-cli-home-" });
    try {
      const r = await runCcb(
        [
          "ide",
          "--no-workbench",
          "--log-level",
          "error",
          "--",
          "sh",
          "-c",
          'echo "child got: $*"',
          "sh",
          "--help",
          "-x",
        ],
        {
          cwd: home.path,
          env: { ...process.env, HOME: home.path, CLAUDE_CONFIG_DIR: join(home.path, ".claude") },
        },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /child got: --help -x/);
      assert.doesNotMatch(r.stdout, /USAGE/);
    } finally {
      home.cleanup();
    }
  });

  it("an unknown subcommand fails with a message", async () => {
    const r = await runCcb(["frobnicate"]);
    assert.notEqual(r.code, 0);
    assert.match(r.stdout + r.stderr, /frobnicate/i);
  });

  // Every command path: a new command without an entry here fails the first test below.
  const COMMANDS = [
    ["serve"],
    ["ide"],
    ["acp"],
    ["link"],
    ["stream"],
    ["runtime", "fetch"],
    ["runtime", "status"],
    ["runtime", "path"],
    ["workbench", "status"],
  ];

  it("the command list above is the one --help shows", async () => {
    const r = await runCcb(["--help"]);
    const listed = [...r.stdout.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1]);
    assert.deepEqual(listed, [...new Set(COMMANDS.map((c) => c[0]))]);
    const rt = await runCcb(["runtime", "--help"]);
    const subs = [
      ...rt.stdout
        .split("Commands:")[1]!
        .split("Flags:")[0]!
        .matchAll(/^ {2}([a-z]+) {2,}/gm),
    ].map((m) => m[1]);
    assert.deepEqual(
      subs,
      COMMANDS.filter((c) => c[0] === "runtime").map((c) => c[1]),
    );
  });

  for (const path of COMMANDS) {
    it(`ccb ${path.join(" ")}: an unknown flag is refused (exit 2), help is plain text`, async () => {
      const r = await runCcb([...path, "--bogus-flag"], { timeoutMs: 20_000 });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`^ccb ${path.join(" ")}: unknown flag --bogus-flag\\.`));
      assert.equal(r.stdout, "");
      const h = await runCcb([...path, "--help"]);
      assert.equal(h.code, 0);
      assert.doesNotMatch(h.stdout, /\x1b\[/, "no ANSI escapes in a pipe");
      assert.match(h.stdout, new RegExp(`^ccb ${path.join(" ")}\n\nUsage: ccb ${path.join(" ")} `));
      for (const line of h.stdout.split("\n")) assert.ok(line.length <= 100, `line fits 100 columns: ${line}`);
    });
  }

  it("a mistyped flag gets a suggestion and nothing starts", async () => {
    const r = await runCcb(["serve", "--worksapce", "/etc"], { timeoutMs: 20_000 });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown flag --worksapce\. Did you mean --workspace\?/);
    assert.doesNotMatch(r.stderr, /workspace:|listening/);
    const l = await runCcb(["link", "--prot", "1234"], { timeoutMs: 20_000 });
    assert.equal(l.code, 2);
    assert.match(l.stderr, /Did you mean --port\?/);
    const c = await runCcb(["srve"]);
    assert.equal(c.code, 2);
    assert.match(c.stderr, /unknown command "srve"\. Did you mean serve\?/);
  });

  it("a bad runtime flag value stops startup, with --no-workbench too; nothing starts", async () => {
    for (const [args, message] of [
      [["--headless-idle", "ten"], /--headless-idle must be a whole number of seconds/],
      [["--runtime", "vim"], /--runtime must be openvscode or code-server/],
    ] as const) {
      for (const extra of [[], ["--no-workbench"]]) {
        const r = await runCcb(["serve", "--stdio", ...args, ...extra], { timeoutMs: 20_000 });
        assert.notEqual(r.code, 0, `${args.join(" ")} ${extra.join(" ")}: ${r.stderr}`);
        assert.match(r.stderr, message);
        assert.doesNotMatch(r.stderr, /ready/);
        assert.equal(r.stdout, "");
      }
    }
  });

  it("known flags still work (control): runtime status --json", async () => {
    const home = tmpdirFixture({ prefix: "ccb-cli-rt-" });
    try {
      const r = await runCcb(["runtime", "status", "--json", "--log-level=error"], {
        env: { ...process.env, CCB_CACHE_DIR: home.path },
      });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).installed, false);
    } finally {
      home.cleanup();
    }
  });

  it("help says what each command takes: version on its own line, link's agent, acp's environment", async () => {
    const root = await runCcb(["--help"]);
    assert.match(root.stdout, /^ccb \d+\.\d+\.\d+\n\n/);
    assert.match((await runCcb(["link", "--help"])).stdout, /Usage: ccb link \[flags\] \[-- <agent command>/);
    assert.match((await runCcb(["ide", "--help"])).stdout, /Usage: ccb ide \[flags\] \[-- <command>/);
    const acp = (await runCcb(["acp", "--help"])).stdout;
    assert.match(acp, /Environment:\n {2}ANTHROPIC_API_KEY/);
    assert.match(acp, /ANTHROPIC_BASE_URL/);
  });

  it("ccb ide -- claude without claude installed says how to install it", async () => {
    const home = tmpdirFixture({ prefix: "ccb-cli-noclaude-" });
    try {
      const r = await runCcb(["ide", "--no-workbench", "--", "claude"], {
        cwd: home.path,
        env: { ...process.env, PATH: "/usr/bin:/bin", HOME: home.path, CLAUDE_CONFIG_DIR: join(home.path, ".claude") },
      });
      assert.equal(r.code, 127);
      assert.match(
        r.stderr,
        /could not run claude: it is not on PATH\. Install the Claude Code CLI with `npm i -g @anthropic-ai\/claude-code`/,
      );
      assert.doesNotMatch(r.stderr, /run `claude` in/);
    } finally {
      home.cleanup();
    }
  });

  it("runtime fetch: a name that does not resolve is reported as such, with no promise to resume", async () => {
    const cache = tmpdirFixture({ prefix: "ccb-cli-dns-" });
    try {
      const r = await runCcb(["runtime", "fetch", "--mirror", "https://ccb-test.invalid"], {
        env: { ...process.env, CCB_CACHE_DIR: cache.path },
        timeoutMs: 120_000,
      });
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stderr,
        /Could not download the runtime: the name ccb-test\.invalid could not be resolved \(DNS: E[A-Z_]+\)/,
      );
      assert.doesNotMatch(r.stderr, /resume/);
    } finally {
      cache.cleanup();
    }
  });
});
