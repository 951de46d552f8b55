import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { codeServerArgs } from "../helpers/peers.ts";
import { spawnStdioPeer } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { eventually, hostsStopped, type ToolResult, text } from "../helpers/workbench.ts";

/** `ccb serve --stdio` with the workbench: its gateway runs on a private loopback port; stdout stays protocol-only. */
const ws = tmpdirFixture({ prefix: "ccb-wbs-ws-" });
const home = tmpdirFixture({ prefix: "ccb-wbs-home-" });
after(async () => {
  // the host the serve started stops once the serve left (grace 0), while its runtime still writes
  await hostsStopped(join(home.path, "state"));
  ws.cleanup();
  await home.cleanupAfterProcesses();
});

function connect(args: string[]): Promise<{ client: Client; stderr: () => string }> {
  return spawnStdioPeer(["serve", "--stdio", "--workspace", ws.path, ...args], {
    HOME: home.path,
    XDG_STATE_HOME: join(home.path, "state"),
    CCB_CACHE_DIR: join(home.path, "cache"),
  });
}

const call = async (c: Client, name: string, args: Record<string, unknown> = {}) =>
  (await c.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as ToolResult;

describe("workbench with serve --stdio", { timeout: 600_000 }, () => {
  it("without a runtime, serve runs and editor tools say BRIDGE_UNAVAILABLE with the way out", async () => {
    const { client } = await connect(["--runtime", "openvscode"]);
    try {
      const r = await eventually(
        "the runtime verdict",
        async () => {
          const res = await call(client, "editor_state");
          return /not installed/.test(text(res)) ? res : undefined;
        },
        60_000,
      );
      assert.equal(r.isError, true);
      assert.match(text(r), /BRIDGE_UNAVAILABLE/);
      assert.match(text(r), /ccb runtime fetch/);
      const files = await call(client, "fs_list");
      assert.notEqual(files.isError, true, "file tools still work");
    } finally {
      await client.close();
    }
  });

  it("with code-server, editor tools work over stdio through the private loopback gateway", async () => {
    const { client, stderr } = await connect([...codeServerArgs(), "--log-level", "info"]);
    try {
      const r = await eventually(
        "editor bridge live",
        async () => {
          const res = await call(client, "editor_state");
          return res.isError ? undefined : res;
        },
        400_000,
      );
      assert.match(text(r), /No active text editor|Active editor/);
      assert.match(
        stderr(),
        /workbench \(code-server\) running in the workbench host \(pid \d+, started by this serve\); open http:\/\/127\.0\.0\.1:\d+\/app\?/,
      );
      assert.doesNotMatch(stderr(), /\/ide\/[A-Za-z0-9_-]{16,}/, "the secret workbench path is not printed");
    } finally {
      await client.close();
    }
  });
});
