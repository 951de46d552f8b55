import { z } from "zod";
import { jsRuntime } from "../core/js-runtime.ts";
import { CCB_VERSION } from "../core/version.ts";
import { defineTool, READ_ONLY } from "./kernel.ts";

export default defineTool({
  name: "workspace_status",
  title: "Workspace status",
  description:
    "Describe this ccb workspace: the roots (paths are relative to the primary root; with several roots, prefix the root name), " +
    "the search engine (ripgrep or JS), whether the live editor bridge is connected (editor_*, diagnostics_get and vscode_* tools " +
    "need it), the number of terminals, the ccb version and the platform. Call it first.",
  input: z.object({}),
  annotations: READ_ONLY,
  async execute(_args, ctx) {
    const { core } = ctx;
    const search = await core.search.engineInfo();
    const bridge = core.bridge.status();
    const terminals = await core.terminals.list();
    const running = terminals.filter((t) => t.running).length;
    const runtime = jsRuntime();
    const roots = core.workspace.roots.map((path, i) => ({
      name: core.workspace.names[i] as string,
      path,
      primary: i === 0,
    }));
    const lines = [
      `ccb ${CCB_VERSION} on ${process.platform} ${process.arch} (${runtime.name} ${runtime.version})`,
      `roots (${roots.length}):`,
      ...roots.map((r) => `  ${r.name}: ${r.path}${r.primary ? " (primary)" : ""}`),
      search.engine === "ripgrep"
        ? `search: ripgrep (${search.rgVersion})`
        : `search: JS engine (${search.reason ?? "ripgrep not used"})`,
      bridge.connected ? "editor bridge: connected" : `editor bridge: not connected (${bridge.reason})`,
      `terminals: ${terminals.length} (${running} running)`,
    ];
    return {
      text: lines.join("\n"),
      structured: {
        version: CCB_VERSION,
        platform: { os: process.platform, arch: process.arch, runtime: runtime.name, runtimeVersion: runtime.version },
        roots,
        primary: core.workspace.primary,
        search: {
          engine: search.engine,
          ...(search.rgVersion ? { rgVersion: search.rgVersion } : {}),
          ...(search.reason ? { reason: search.reason } : {}),
        },
        bridge,
        terminals: { count: terminals.length, running },
      },
    };
  },
});
