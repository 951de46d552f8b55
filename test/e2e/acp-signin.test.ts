import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { AgentHarness, tempDataDir } from "../helpers/acp-harness.ts";
import { ccbCommand, runCcb } from "../helpers/cli.ts";
import { type FakeAnthropic, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { TmuxPane } from "../helpers/tmux.ts";

const GOOD_KEY = "sk-ant-api03-signin-GOOD-7f3c1e9a2b4d6f8091a3c5e7";
const WRONG_KEY = "sk-ant-api03-signin-WRONG-0d2e4f6a8c1b3d5e7f90";
const ENV_KEY = "sk-ant-api03-from-the-ENV-5a7c9e1b3d5f7a9c1e3b";
const MASK = "[secret removed by ccb]";

/** Every process of this user whose command line or environment holds `needle`. */
function processesHolding(needle: string): { pid: string; where: "cmdline" | "environ" }[] {
  const hits: { pid: string; where: "cmdline" | "environ" }[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    for (const where of ["cmdline", "environ"] as const) {
      try {
        if (readFileSync(`/proc/${pid}/${where}`).includes(needle)) hits.push({ pid, where });
      } catch {
        // gone, or another user's
      }
    }
  }
  return hits;
}

/** The key a request to the fake API carried (the SDK sends x-api-key or a Bearer authorization). */
function keyOf(headers: Record<string, unknown>): string | undefined {
  if (typeof headers["x-api-key"] === "string") return headers["x-api-key"];
  return /^Bearer (.+)$/.exec(String(headers.authorization ?? ""))?.[1];
}

/** The wire form of an initialize answer (as the agent wrote it, before the SDK client parsed it). */
function wireInit(h: AgentHarness): any {
  return h.frames.find((f) => f.result?.protocolVersion !== undefined)?.result;
}

describe("ccb acp sign-in: terminal auth method, secret store, logout", () => {
  let api: FakeAnthropic;
  const data = tempDataDir();
  const project = tmpdirFixture({ git: true });
  const configDir = join(data.path, "config", "ccb");
  const storeFile = join(configDir, "secrets", "anthropic.json");
  before(async () => {
    api = await startFakeAnthropic({
      keys: [GOOD_KEY, ENV_KEY],
      script: ({ body }) => {
        const last = body.messages?.at(-1);
        const hasResult = Array.isArray(last?.content) && last.content.some((c: any) => c.type === "tool_result");
        if (body.tools && !hasResult)
          return { toolUses: [{ name: "bash", input: { command: "env; echo ENV-LISTED" } }] };
        return { text: "Answered with the signed-in key." };
      },
    });
  });
  after(async () => {
    await api.close();
    data.cleanup();
    project.cleanup();
  });

  const agentEnv = () => ({ ANTHROPIC_BASE_URL: api.url, CCB_LOG_LEVEL: "debug" });

  test("initialize: the terminal method only for clients that opted in (v1 auth.terminal, or _meta terminal-auth)", async () => {
    const h = AgentHarness.start({ dataDir: data.path, env: agentEnv() });
    try {
      const plain = await h.initialize({ fs: { readTextFile: true, writeTextFile: true }, terminal: true });
      assert.deepEqual(
        plain.authMethods?.map((m) => m.id),
        ["anthropic-api-key"],
        "no terminal method without the opt-in",
      );
      assert.deepEqual(plain.agentCapabilities?.auth?.logout, {}, "logout is advertised");
    } finally {
      await h.close();
    }
    const v1 = AgentHarness.start({ dataDir: data.path, env: agentEnv() });
    try {
      const init = await v1.initialize({ auth: { terminal: true } });
      assert.deepEqual(
        init.authMethods?.map((m) => m.id),
        ["ccb-login", "anthropic-api-key"],
      );
      const login = wireInit(v1).authMethods[0];
      assert.equal(login.type, "terminal");
      assert.deepEqual(login.args, ["--login"]);
      assert.equal(login._meta, undefined, "the v1 form needs no _meta command");
      // AUTH_REQUIRED names the methods this client was offered
      await assert.rejects(
        v1.newSession(project.path),
        (e: acp.RequestError) =>
          e.code === -32000 &&
          /ccb acp --login/.test(e.message) &&
          JSON.stringify((e.data as { authMethods: string[] }).authMethods) ===
            JSON.stringify(["ccb-login", "anthropic-api-key"]),
      );
    } finally {
      await v1.close();
    }
    // the registry checker's form: clientCapabilities._meta["terminal-auth"] = true
    const legacy = AgentHarness.start({ dataDir: data.path, env: agentEnv() });
    try {
      await legacy.initialize({ terminal: true, _meta: { terminal_output: true, "terminal-auth": true } });
      const methods = wireInit(legacy).authMethods;
      assert.equal(methods[0].type, "terminal");
      const meta = methods[0]._meta["terminal-auth"];
      assert.deepEqual(meta.args.slice(-2), ["acp", "--login"]);
      assert.ok(existsSync(meta.command), `the _meta command is a real program: ${meta.command}`);
      assert.ok(
        methods.some((m: { type?: string }) => m.type === "terminal" || m.type === "agent" || m.type === undefined),
        "a method of a type the registry accepts",
      );
    } finally {
      await legacy.close();
    }
  });

  test("sign-in in a real terminal: hidden prompt, a wrong key refused (401), the right one stored 0600 in 0700; a prompt answered with it; logout removes it", async () => {
    // the client's launch of the method: the agent's own command plus the method's args
    const launch = ccbCommand(["acp", "--login"]);
    const pane = new TmuxPane([launch.command, ...launch.args], {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: data.path,
      XDG_CONFIG_HOME: join(data.path, "config"),
      CCB_DATA_DIR: data.path,
      ANTHROPIC_BASE_URL: api.url,
      CCB_LOG_LEVEL: "debug",
      TERM: "xterm",
    });
    try {
      await pane.waitFor(/Anthropic API key: /);
      pane.type(WRONG_KEY);
      let screen = await pane.waitFor(/refused this key \(401: invalid x-api-key\)/);
      assert.ok(!screen.includes(WRONG_KEY), "the typed key is not echoed");
      assert.ok(!screen.includes("WRONG"), "no part of the key is echoed");
      assert.equal(existsSync(storeFile), false, "a refused key is not stored");
      // the process now waits for a second attempt, holding the typed key in memory only:
      // not on any command line, not in any environment (positive control: the scan does see
      // the login process's own arguments and environment)
      assert.deepEqual(processesHolding(WRONG_KEY), []);
      const loginProcs = processesHolding(`XDG_CONFIG_HOME=${join(data.path, "config")}`);
      assert.ok(loginProcs.length > 0, "the scan reads the login process's environment");
      const own = loginProcs.map((p) => readFileSync(`/proc/${p.pid}/cmdline`, "utf8"));
      assert.ok(
        own.some((c) => c.includes("--login")),
        "the scan reads the login process's command line",
      );

      pane.type(GOOD_KEY);
      screen = await pane.waitFor(/EXIT=\d+/);
      assert.match(screen, /Signed in\. The key is stored in .*anthropic\.json \(readable only by you\)/);
      assert.match(screen, /EXIT=0/);
      assert.ok(!screen.includes(GOOD_KEY) && !screen.includes("GOOD"), "the right key is not echoed either");
    } finally {
      pane.close();
    }
    assert.equal(
      api.modelListRequests.map((r) => keyOf(r.headers)).join(","),
      `${WRONG_KEY},${GOOD_KEY}`,
      "one cheap check per attempt",
    );
    assert.equal(statSync(storeFile).mode & 0o777, 0o600);
    assert.equal(statSync(join(configDir, "secrets")).mode & 0o777, 0o700);
    assert.equal(JSON.parse(readFileSync(storeFile, "utf8")).anthropicApiKey, GOOD_KEY);

    // a client now starts the agent as before (no key in its environment): the prompt is answered with the stored key
    const h = AgentHarness.start({
      dataDir: data.path,
      env: agentEnv(),
      onPermission: () => ({ outcome: { outcome: "selected", optionId: "allow_once" } }),
    });
    try {
      await h.initialize({ auth: { terminal: true } });
      assert.deepEqual(await h.agent.request(acp.methods.agent.authenticate, { methodId: "anthropic-api-key" }), {});
      const { sessionId } = await h.newSession(project.path);
      const before = api.requests.length;
      assert.equal((await h.prompt(sessionId, "list your environment")).stopReason, "end_turn");
      assert.match(h.textOf(sessionId), /Answered with the signed-in key/);
      const mine = api.requests.slice(before);
      assert.ok(mine.length >= 2);
      for (const r of mine) assert.equal(keyOf(r.headers), GOOD_KEY, "the model client uses the stored key");
      // the tool's child environment: `env` ran (positive control) without the key, and without
      // anything masked (a masked key would show that the key reached the child)
      const toolResult = JSON.stringify(mine.at(-1)!.body.messages.at(-1));
      assert.match(toolResult, /ENV-LISTED/);
      assert.match(toolResult, /HOME=/);
      assert.ok(!toolResult.includes(GOOD_KEY) && !toolResult.includes(MASK), "the key never reaches a tool's child");
      assert.ok(!JSON.stringify(h.frames).includes(GOOD_KEY), "nor anything the client sees");

      // logout: the stored key is removed; the open session and new ones ask to sign in again
      assert.deepEqual(await h.agent.request(acp.methods.agent.logout, {}), {});
      assert.equal(existsSync(storeFile), false, "logout removed the stored key");
      await assert.rejects(h.prompt(sessionId, "again"), (e: acp.RequestError) => e.code === -32000);
      await assert.rejects(
        h.newSession(project.path),
        (e: acp.RequestError) =>
          e.code === -32000 && (e.data as { authMethods: string[] }).authMethods.includes("ccb-login"),
      );
    } finally {
      await h.close();
    }
    assert.ok(h.stderr.length > 0, "the agent logged (debug)");
    assert.ok(!h.stderr.includes(GOOD_KEY), "the key is not in the agent's log");
  });

  test("ANTHROPIC_API_KEY in the environment wins over the stored key; --logout; a network error is a clear message", async () => {
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: data.path,
      XDG_CONFIG_HOME: join(data.path, "config"),
      CCB_DATA_DIR: data.path,
      ANTHROPIC_BASE_URL: api.url,
    };
    // piped input (no TTY): one attempt, the first line
    const stored = await runCcb(["--acp", "--login"], { env, input: `${GOOD_KEY}\n` });
    assert.equal(stored.code, 0, stored.stderr);
    assert.equal(stored.stdout, "", "nothing on stdout");
    assert.ok(!stored.stderr.includes(GOOD_KEY));
    assert.ok(existsSync(storeFile));

    const h = AgentHarness.start({ dataDir: data.path, env: { ...agentEnv(), ANTHROPIC_API_KEY: ENV_KEY } });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(project.path);
      const before = api.requests.length;
      await h.prompt(sessionId, "hi");
      assert.equal(keyOf(api.requests[before]?.headers ?? {}), ENV_KEY);
      // logout leaves a key from the environment in place
      await h.agent.request(acp.methods.agent.logout, {});
      assert.equal(existsSync(storeFile), false);
      const after = api.requests.length;
      await h.prompt(sessionId, "hi again");
      assert.equal(keyOf(api.requests[after]?.headers ?? {}), ENV_KEY);
    } finally {
      await h.close();
    }

    const again = await runCcb(["acp", "--login"], { env, input: `${GOOD_KEY}\n` });
    assert.equal(again.code, 0, again.stderr);
    const out = await runCcb(["acp", "--logout"], { env });
    assert.equal(out.code, 0);
    assert.match(out.stderr, /Signed out: removed .*anthropic\.json/);
    assert.equal(existsSync(storeFile), false);

    const unreachable = await runCcb(["acp", "--login"], {
      env: { ...env, ANTHROPIC_BASE_URL: "http://127.0.0.1:9" },
      input: `${GOOD_KEY}\n`,
    });
    assert.equal(unreachable.code, 1);
    assert.match(
      unreachable.stderr,
      /Could not reach the Anthropic API at http:\/\/127\.0\.0\.1:9 .*ANTHROPIC_BASE_URL/,
    );
    assert.match(unreachable.stderr, /Nothing was stored/);
    assert.equal(existsSync(storeFile), false);
  });
});
