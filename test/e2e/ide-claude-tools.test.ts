import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { claudeEnv, PtyProcess, writeClaudeHome } from "../helpers/claude-session.ts";
import { ccbCommand } from "../helpers/cli.ts";
import { type FakeAnthropic, isSideRequest, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { claudeBin, codeServerArgs } from "../helpers/peers.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * `ccb ide -- claude` with a real code-server workbench and the real Claude Code CLI (fake
 * Messages API): claude gets ccb's editor tools as the MCP server "ccb", the model calls
 * mcp__ccb__refactor_rename, and the rename lands in the workspace through the workbench.
 */
const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

describe("ccb ide -- claude gets the editor tools", { timeout: 600_000 }, () => {
  const tmp = tmpdirFixture({ prefix: "ccb-ide-tools-" });
  const ws = join(tmp.path, "proj");
  const home = join(tmp.path, "home");
  const ctmp = join(tmp.path, "tmp");
  const requests: any[] = [];
  let api: FakeAnthropic;
  let pty: PtyProcess | undefined;
  const read = (path: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return "";
    }
  };
  // ccb ide's own log, then the log of the workbench host it started (the host runs the workbench)
  const readLog = () => {
    const records = join(home, "state", "ccb", "workbenches");
    const hostLogs = existsSync(records) ? readdirSync(records).filter((n) => n.endsWith(".host.log")) : [];
    return [read(join(tmp.path, "ccb.log")), ...hostLogs.map((n) => read(join(records, n)))].join("\n") || "(no log)";
  };

  before(async () => {
    claudeBin();
    for (const d of [join(ws, "src"), home, ctmp, join(home, "state")]) mkdirSync(d, { recursive: true });
    writeFileSync(
      join(ws, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, module: "ESNext", moduleResolution: "Bundler", noEmit: true },
      }),
    );
    writeFileSync(join(ws, "src/lib.ts"), 'export function greet(name: string): string {\n  return "hi " + name;\n}\n');
    writeFileSync(join(ws, "src/main.ts"), 'import { greet } from "./lib";\n\ngreet("a");\n');
    writeClaudeHome(home, ws);
    api = await startFakeAnthropic({
      script: ({ body }) => {
        if (isSideRequest(body)) return { text: "Fake title" };
        requests.push(body);
        const hasTool = body.tools?.some((t: any) => t.name === "mcp__ccb__refactor_rename");
        const last = body.messages.at(-1);
        const answered = Array.isArray(last?.content) && last.content.some((c: any) => c.type === "tool_result");
        if (answered) return { text: "Done." };
        // claude connects its MCP servers in the background: until "ccb" is there, say so (the test asks again)
        if (!hasTool) return { text: "Not connected yet." };
        return {
          toolUses: [
            {
              name: "mcp__ccb__refactor_rename",
              input: { path: "src/lib.ts", position: { line: 1, column: 17 }, newName: "salute", apply: true },
            },
          ],
        };
      },
    });
  });

  after(async () => {
    try {
      const script = pty?.child.pid;
      // ccb ide is the child of the pty wrapper; SIGTERM makes it stop claude and its workbench.
      for (const pid of script ? childrenOf(script) : []) {
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          // gone
        }
      }
      if (pty) {
        const t = setTimeout(() => pty?.child.kill("SIGKILL"), 30_000);
        await pty.exited;
        clearTimeout(t);
      }
      await api?.close();
    } finally {
      tmp.cleanup();
    }
  });

  it("the model calls mcp__ccb__refactor_rename and the rename lands in both files", async () => {
    const { command, args } = ccbCommand([
      "ide",
      "--workspace",
      ws,
      ...codeServerArgs(),
      "--log-file",
      join(tmp.path, "ccb.log"),
      "--log-level",
      "debug",
      "--",
      claudeBin(),
      "--permission-mode",
      "default",
      "--allowedTools",
      "mcp__ccb__refactor_rename",
    ]);
    const env = {
      ...claudeEnv({ home, tmp: ctmp, apiUrl: api.url }),
      PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
      XDG_STATE_HOME: join(home, "state"),
      XDG_CACHE_HOME: join(home, "cache"),
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_DATA_HOME: join(home, "data"),
      // ccb's headless Chromium runs as an unprivileged account: its profile goes in the system temp folder
      TMPDIR: tmpdir(),
    };
    pty = new PtyProcess(`stty cols 160 rows 50; exec ${[command, ...args].map(shq).join(" ")}`, ws, env);
    await pty.waitFor(/for shortcuts/);
    // the workbench's extension host has connected to the bridge (in the workbench host ccb ide started)
    await waitUntil(() => /bridge: extension host \d+ serves/.test(readLog()), 240_000);
    const hasTool = (b: any) => b.tools?.some((t: any) => t.name === "mcp__ccb__refactor_rename");
    // Ask until a request carries ccb's tools (claude connects MCP servers in the background), then the rename runs.
    const deadline = Date.now() + 240_000;
    while (!requests.some(hasTool)) {
      if (Date.now() > deadline) throw new Error(`claude never offered ccb's tools:\n${readLog().slice(-3000)}`);
      const n = requests.length;
      const from = pty.output.length;
      pty.type("rename greet to salute");
      await pty.waitFor(/rename\s*greet\s*to\s*salute/, from);
      pty.type("\r");
      await waitUntil(() => requests.length > n, 120_000);
      if (!requests.some(hasTool)) await new Promise((r) => setTimeout(r, 3000));
    }
    const first = requests.find(hasTool);
    await waitUntil(() => requests.indexOf(first) < requests.length - 1, 240_000);
    const answer = requests[requests.indexOf(first) + 1];
    const names: string[] = first.tools.map((t: any) => t.name);
    assert.ok(names.includes("mcp__ccb__refactor_rename"), names.join(", "));
    assert.ok(names.includes("mcp__ccb__language_call_hierarchy"));
    assert.ok(
      !names.some((n) => /^mcp__ccb__(fs_|terminal_|git_)/.test(n)),
      "the profile leaves claude's own tools out",
    );
    const last = answer.messages.at(-1);
    const result = last.content.find((c: any) => c.type === "tool_result");
    const text = typeof result.content === "string" ? result.content : result.content.map((c: any) => c.text).join("");
    assert.notEqual(result.is_error, true, text);
    // claude hands the model the tool's structuredContent (when there is one) rather than its text
    const answered = JSON.parse(text);
    assert.equal(answered.applied, true);
    assert.equal(answered.edits, 3);
    assert.deepEqual(answered.files.map((f: any) => [f.path, f.saved]).sort(), [
      ["src/lib.ts", true],
      ["src/main.ts", true],
    ]);
    assert.match(readFileSync(join(ws, "src/lib.ts"), "utf8"), /export function salute\(/);
    assert.equal(readFileSync(join(ws, "src/main.ts"), "utf8"), 'import { salute } from "./lib";\n\nsalute("a");\n');
  });
});

async function waitUntil(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 250));
  }
}
