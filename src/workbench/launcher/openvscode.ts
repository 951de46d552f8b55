import { existsSync } from "node:fs";
import { join } from "node:path";
import { CcbError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import type { LaunchInput, Runtime } from "./types.ts";

export function isOpenVscodeRoot(root: string): boolean {
  return existsSync(join(root, "bin/openvscode-server"));
}

/**
 * OpenVSCode Server from --runtime-root, else from ccb's runtime cache, which the runtime that ships
 * with ccb (npm runtime package, release tarball) fills on first use; else RUNTIME_UNAVAILABLE
 * ("run `ccb runtime fetch`"). Says which one it runs.
 */
export async function openVscodeRuntime(
  rootOption: string | undefined,
  log?: Logger | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Runtime> {
  let root = rootOption;
  if (!root) {
    const { ensureRuntime } = await import("../../runtime-fetch/index.ts");
    const rt = await ensureRuntime({ env, log });
    root = rt.root;
    log?.info(
      `runtime: OpenVSCode Server ${rt.version} (${rt.platform}) from ${rt.source === "cache" ? "the cache" : rt.from} at ${root}`,
    );
  } else {
    log?.info(`runtime: OpenVSCode Server at ${root} (--runtime-root)`);
  }
  if (!isOpenVscodeRoot(root)) {
    throw new CcbError(
      "RUNTIME_UNAVAILABLE",
      `${root} is not an OpenVSCode Server folder (no bin/openvscode-server).`,
      {
        hint: "Run `ccb runtime fetch`, or pass --runtime-root of an unpacked openvscode-server release.",
      },
    );
  }
  const serverRoot = root;
  return {
    kind: "openvscode",
    describe: `OpenVSCode Server at ${serverRoot}`,
    root: serverRoot,
    announcePrefix: true,
    healthPath: "/",
    workbenchPath: (folder) => `/?folder=${encodeURIComponent(folder)}`,
    command(input: LaunchInput) {
      const { dirs } = input;
      return {
        command: join(serverRoot, "bin/openvscode-server"),
        args: [
          // A Unix socket in the 0700 state folder instead of a TCP port anyone on the machine could reach.
          "--socket-path",
          input.socketPath,
          // No --server-base-path: the secret prefix would be on the command line, readable by every
          // account. The server serves at "/"; the gateway strips `/ide/<key>` and tells the page
          // its prefix in X-Forwarded-Prefix (src/workbench/routes.ts).
          "--without-connection-token",
          "--accept-server-license-terms",
          "--telemetry-level",
          "off",
          "--disable-workspace-trust",
          "--server-data-dir",
          dirs.serverData,
          "--user-data-dir",
          dirs.userData,
          "--extensions-dir",
          dirs.extensions,
          "--default-folder",
          input.folder,
        ],
        env: {},
      };
    },
  };
}
