// The set-up the workbench benchmarks share: a private home and workspace, the built bridge
// extension, and (for tool benchmarks) an in-process core + gateway + code-server workbench with its
// headless client, ready once the bridge has connected.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCore } from "../src/core/core.ts";
import { silentLogger } from "../src/core/log.ts";
import { Gateway } from "../src/net/gateway.ts";
import { startWorkbench } from "../src/workbench/index.ts";
import { codeServerRoot, node24 } from "../test/helpers/peers.ts";

const root = new URL("..", import.meta.url).pathname;

/** A temporary home with a `ws` folder, and the environment that confines the runtime to it. */
export function benchWorkspace(prefix: string) {
  if (!existsSync(join(root, "dist/bridge-extension")))
    spawnSync(process.execPath, [join(root, "scripts/build-extension.mjs")], { stdio: "inherit" });
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const ws = join(dir, "ws");
  mkdirSync(ws);
  const env = {
    ...process.env,
    HOME: dir,
    XDG_STATE_HOME: join(dir, "state"),
    XDG_CACHE_HOME: join(dir, "cache"),
    XDG_CONFIG_HOME: join(dir, "config"),
    ...(process.getuid?.() === 0 ? { CCB_CHROMIUM_NO_SANDBOX: "1" } : {}),
  };
  return { dir, ws, env };
}

/** code-server + headless Chromium beside an in-process core for `ws`; resolves once the bridge serves. */
export async function bootBenchWorkbench(ws: string, env: NodeJS.ProcessEnv) {
  const core = createCore({ roots: [ws], log: silentLogger });
  const gw = new Gateway({ host: "127.0.0.1", port: 0, log: silentLogger });
  const url = await gw.listen();
  const wb = startWorkbench({
    core,
    editor: core.claimEditor("bench"),
    http: { gateway: gw, url },
    log: silentLogger,
    runtime: "code-server",
    runtimeRoot: codeServerRoot(),
    runtimeNode: node24(),
    headlessClient: true,
    env,
  });
  await wb.ready;
  await wb.bridgeConnected;
  const ctx = { core, signal: new AbortController().signal, log: silentLogger };
  return { core, gw, wb, ctx };
}
