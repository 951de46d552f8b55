import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./cli.ts";
import { bootWorkbench, text, type Workbench } from "./workbench.ts";

/** The compiled binary under test: CCB_COMPILED_BIN, else dist/ccb (scripts/test.mjs compiles it first). */
export function compiledBinary(): string {
  const bin = process.env.CCB_COMPILED_BIN ?? join(repoRoot, "dist/ccb");
  if (!existsSync(bin))
    throw new Error(`${bin} is missing: run \`node scripts/compile.mjs\` (npm test does it before the install tests).`);
  return bin;
}

export const sha256File = (p: string): string => createHash("sha256").update(readFileSync(p)).digest("hex");

/**
 * Run `command` (an installed ccb, outside the checkout) as `ccb serve --http` with code-server (or
 * `opts.runtimeArgs`: [] runs what ccb finds itself) and headless Chromium, from `cwd`, and prove the bridge is live: a file opened through the editor
 * tools shows up in the editor state. Returns the stderr of the run.
 */
export async function liveBridge(
  command: string,
  cwd: string,
  home: string,
  opts: { runtimeArgs?: string[]; env?: Record<string, string> } = {},
): Promise<string> {
  const workspace = join(home, "ws");
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, "hello.txt"), "hello from an installed ccb\n");
  const savedBin = process.env.CCB_TEST_BIN;
  const savedCwd = process.cwd();
  process.env.CCB_TEST_BIN = command;
  process.chdir(cwd);
  let wb: Workbench | undefined;
  try {
    wb = await bootWorkbench(workspace, home, [], opts);
    await wb.ok("editor_open", { path: "hello.txt" });
    const st = text(await wb.ok("editor_state"));
    if (!st.includes("hello.txt")) throw new Error(`editor_state does not show hello.txt:\n${st}`);
    return wb.serve.stderr();
  } finally {
    await wb?.stop();
    process.chdir(savedCwd);
    if (savedBin === undefined) delete process.env.CCB_TEST_BIN;
    else process.env.CCB_TEST_BIN = savedBin;
  }
}

/** The npm-side peers the install tests use (scripts/setup-peers.sh installs them). */
export function peerBin(folder: string, pkg: string, bin: string): string {
  const p = join(process.env.CCB_PEERS_DIR ?? join(repoRoot, ".cache/peers"), folder, "node_modules", pkg, bin);
  if (!existsSync(p))
    throw new Error(`${pkg} is not installed at ${p}. Run scripts/setup-peers.sh (npm test does it).`);
  return p;
}
