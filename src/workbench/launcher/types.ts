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
  /**
   * The command line and environment: never the secret prefix `/ide/<key>` (a command line is
   * readable by every account in /proc/<pid>/cmdline), which is why LaunchInput has none. Every
   * runtime serves at "/" on its own socket; the gateway strips the prefix before proxying.
   */
  command(input: LaunchInput): LaunchCommand;
  /**
   * Whether the runtime writes absolute URLs into its pages and so is told the browser-facing
   * prefix on every request (`X-Forwarded-Prefix`, which VS Code's server honours: OpenVSCode);
   * code-server answers with relative URLs.
   */
  announcePrefix: boolean;
  /** Path on the runtime's own socket answering 200 once it can serve (for readiness and the benchmark). */
  healthPath: string;
  /** Path of the workbench page on the runtime's socket (below the gateway's prefix for a browser), folder query included. */
  workbenchPath(folder: string): string;
}
