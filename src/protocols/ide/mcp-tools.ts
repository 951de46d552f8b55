import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { selfCommand } from "../../util/self.ts";
import { runtimeArgv, type WorkbenchRuntimeOptions } from "../../workbench/runtime-flags.ts";

/**
 * `ccb ide -- claude` hands claude ccb's editor tools: an MCP configuration (a 0600 file in a
 * private 0700 folder, removed when ccb ide ends) naming one stdio server, `ccb serve --stdio
 * --tools editor` for the same roots, which attaches to the workbench `ccb ide` shares. Nothing
 * secret is on its command line or in the file: the server finds the workbench through ccb's own
 * per-user state.
 */

export interface McpToolsOptions extends WorkbenchRuntimeOptions {
  roots: readonly string[];
}

/** Whether a `-- <command>` is the Claude Code CLI (the only command that takes --mcp-config). */
export function isClaude(cmd: string): boolean {
  return /^claude(\.exe|\.cmd)?$/i.test(basename(cmd));
}

/** The `ccb serve` invocation claude starts as its "ccb" MCP server. */
export function serveCommand(o: McpToolsOptions): { command: string; args: string[] } {
  const args = ["serve", "--stdio", "--tools", "editor", "--log-level", "warn"];
  for (const r of o.roots) args.push("--workspace", r);
  args.push(...runtimeArgv(o));
  return selfCommand(args);
}

/** Write the configuration; the file's path and a remover. */
export function writeMcpConfig(o: McpToolsOptions): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "ccb-ide-mcp-"));
  const path = join(dir, "mcp.json");
  const { command, args } = serveCommand(o);
  writeFileSync(path, `${JSON.stringify({ mcpServers: { ccb: { type: "stdio", command, args } } }, null, 2)}\n`, {
    mode: 0o600,
  });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
