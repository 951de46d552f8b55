/** One interface, two runtimes: how to start a Code OSS server and reach it. */
export type RuntimeKind = "openvscode" | "code-server";

export interface LaunchDirs {
  /** ccb-owned per-instance folder outside the workspace (0700). */
  state: string;
  userData: string;
  extensions: string;
  serverData: string;
}

export interface LaunchInput {
  /** The Unix socket the runtime listens on, inside the 0700 state folder: no TCP port at all. */
  socketPath: string;
  /** The public base path, `/ide/<key>` (no trailing slash). */
  basePath: string;
  dirs: LaunchDirs;
  /** The folder the workbench opens (the primary workspace root). */
  folder: string;
  /** Flags for the runtime's own Node, before its entry script (code-server; OpenVSCode's script starts its Node itself). */
  nodeFlags?: readonly string[] | undefined;
  /** code-server: run its server in the one process ccb starts, without the restart wrapper that forks it (`one-process`). */
  oneProcess?: boolean | undefined;
}

export interface LaunchCommand {
  command: string;
  args: string[];
  /** Extra environment (merged over the sanitised parent environment). */
  env: Record<string, string>;
}

export interface Runtime {
  kind: RuntimeKind;
  /** Human description for logs and status (no secrets). */
  describe: string;
  /** The runtime's folder (OpenVSCode root or the code-server package). */
  root: string;
  command(input: LaunchInput): LaunchCommand;
  /** Whether the gateway strips `/ide/<key>` before proxying (code-server serves at "/" behind any prefix). */
  stripPrefix: boolean;
  /** Path on the runtime's own socket answering 200 once it can serve (for readiness and the benchmark). */
  healthPath(basePath: string): string;
  /** Path of the workbench page on the runtime (with the base path when not stripped), folder query included. */
  workbenchPath(basePath: string, folder: string): string;
}
