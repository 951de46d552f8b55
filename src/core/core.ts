import { BridgeSlot } from "./editor/bridge.ts";
import { FileService } from "./files/files.ts";
import { GitService } from "./git/git.ts";
import { type Logger, silentLogger } from "./log.ts";
import { SearchService } from "./search/search.ts";
import { TerminalManager } from "./terminals/manager.ts";
import { TerminalSlot } from "./terminals/slot.ts";
import { Workspace } from "./workspace.ts";

export interface CoreOptions {
  roots: readonly string[];
  log?: Logger;
  /** Path of ripgrep; undefined = look it up, null = never use it. */
  rgPath?: string | null;
}

/**
 * The one shared core: workspace confinement and the file, search, terminal, git and editor
 * services. It knows nothing about MCP, ACP, sockets or the console; front ends adapt it.
 */
export interface Core {
  readonly workspace: Workspace;
  readonly files: FileService;
  readonly search: SearchService;
  /** The workspace's terminals: this process's (`terminals.local`), or the shared workbench's while attached. */
  readonly terminals: TerminalSlot;
  readonly git: GitService;
  readonly bridge: BridgeSlot;
  readonly log: Logger;
  dispose(): Promise<void>;
}

export function createCore(options: CoreOptions): Core {
  const log = options.log ?? silentLogger;
  const workspace = new Workspace(options.roots);
  const terminals = new TerminalSlot(new TerminalManager(workspace, log.child("terminal")));
  return {
    workspace,
    files: new FileService(workspace),
    search: new SearchService(workspace, options.rgPath === undefined ? {} : { rgPath: options.rgPath }),
    terminals,
    git: new GitService(workspace, { log: log.child("git") }),
    bridge: new BridgeSlot(),
    log,
    async dispose() {
      await terminals.local.dispose();
    },
  };
}
