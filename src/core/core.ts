import { BridgeSlot, type BridgeWriter } from "./editor/bridge.ts";
import { FileService } from "./files/files.ts";
import { GitService } from "./git/git.ts";
import { type Logger, silentLogger } from "./log.ts";
import { SearchService } from "./search/search.ts";
import { TerminalManager } from "./terminals/manager.ts";
import { TerminalSlot } from "./terminals/slot.ts";
import type { TerminalService } from "./terminals/types.ts";
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
  /**
   * The one right to change the core's editor state (the bridge, its reason, the workbench) and to
   * relay its terminals: taken by whoever holds the workbench for this core (a front end's workbench
   * lease, the detached host). A new claim revokes the previous writer.
   */
  claimEditor(holder: string): EditorWriter;
  /** Run `fn` first when the core is disposed (work a service queued and must finish: checkpoints' queued records). */
  onDispose(fn: () => Promise<void>): void;
  dispose(): Promise<void>;
}

/** The core's editor state and terminal relay, written by its current holder only (Core.claimEditor). */
export interface EditorWriter extends BridgeWriter {
  /** Relay the core's terminals to the shared workbench's. */
  useTerminals(remote: TerminalService): void;
  /** Back to this process's own terminals, if `remote` is still the one in use (a revoked writer may: it only undoes its own). */
  releaseTerminals(remote: TerminalService): void;
}

export function createCore(options: CoreOptions): Core {
  const log = options.log ?? silentLogger;
  const workspace = new Workspace(options.roots);
  const terminals = new TerminalSlot(new TerminalManager(workspace, log.child("terminal")));
  const bridge = new BridgeSlot();
  const disposers: Array<() => Promise<void>> = [];
  return {
    workspace,
    files: new FileService(workspace),
    search: new SearchService(workspace, options.rgPath === undefined ? {} : { rgPath: options.rgPath }),
    terminals,
    git: new GitService(workspace, { log: log.child("git") }),
    bridge,
    log,
    claimEditor(holder) {
      const writer = bridge.claim(holder);
      return {
        holder,
        get current() {
          return writer.current;
        },
        set: (b) => writer.set(b),
        clear: (reason) => writer.clear(reason),
        setWorkbench: (info) => writer.setWorkbench(info),
        useTerminals(remote) {
          if (writer.current) terminals.use(remote);
        },
        releaseTerminals: (remote) => terminals.release(remote),
      };
    },
    onDispose(fn) {
      disposers.push(fn);
    },
    async dispose() {
      for (const fn of disposers.splice(0)) await fn().catch((err: unknown) => log.warn(`dispose: ${String(err)}`));
      await terminals.local.dispose();
    },
  };
}
