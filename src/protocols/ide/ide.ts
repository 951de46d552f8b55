import type { Core } from "../../core/core.ts";
import type { Logger } from "../../core/log.ts";
import { registerSecret } from "../../core/secret-vault.ts";
import { CCB_VERSION } from "../../core/version.ts";
import { newToken } from "../../util/secrets.ts";
import { BridgeEditor } from "./bridge-editor.ts";
import { DiffRegistry } from "./diffs.ts";
import { cleanStaleLocks, lockDir as defaultLockDir, ideNameFor, removeLock, writeLock } from "./discovery-file.ts";
import type { IdeEditor } from "./editor.ts";
import { Notifier } from "./notifications.ts";
import { startSocketServer } from "./server.ts";
import { attachSession } from "./session.ts";

/**
 * The Claude Code IDE server: WebSocket MCP server + lock file + notifications, over the core's
 * workspace and the live editor (the workbench bridge by default).
 */

export interface StartIdeOptions {
  core: Core;
  log: Logger;
  /** The live editor; default: the workbench bridge of `core.bridge`. */
  editor?: IdeEditor;
  env?: NodeJS.ProcessEnv;
  /** Default `${CLAUDE_CONFIG_DIR:-~/.claude}/ide`. */
  lockDir?: string;
  port?: number;
  maxPayloadBytes?: number;
  pingIntervalMs?: number;
  debounceMs?: number;
  readyDelayMs?: number;
  /** What started this server, for its `ideName` (default `ccb ide`). */
  frontEndLabel?: string;
}

export interface IdeServer {
  readonly port: number;
  readonly url: string;
  readonly lockPath: string;
  readonly ideName: string;
  readonly workspaceFolders: readonly string[];
  /** The secret of this server's lock file. Never log it. */
  readonly authToken: string;
  readonly notifier: Notifier;
  readonly diffs: DiffRegistry;
  /** Live client connections. */
  clientCount(): number;
  /** WebSocket upgrades accepted and refused since start. */
  stats(): { accepted: number; refused: number };
  /** Pids clients announced in `ide_connected`. */
  clientPids(): number[];
  /** Client connected (with the pid it announced in `ide_connected`) and disconnected events. */
  onClient(
    listener: (event: { type: "connected" | "disconnected"; connectionId: number; pid?: number }) => void,
  ): () => void;
  close(): Promise<void>;
}

export async function startIde(options: StartIdeOptions): Promise<IdeServer> {
  const log = options.log;
  const core = options.core;
  const ownEditor = options.editor ? undefined : new BridgeEditor(core.bridge, log.child("bridge"));
  const editor = options.editor ?? (ownEditor as BridgeEditor);
  const dir = options.lockDir ?? defaultLockDir(options.env ?? process.env);

  for (const p of cleanStaleLocks(dir)) log.info(`removed a stale ccb IDE lock file: ${p}`);

  const authToken = newToken();
  registerSecret(authToken); // masked wherever it could reach a model (tool results, relayed terminal output, logs)
  const notifier = new Notifier({
    log: log.child("notify"),
    ...(options.debounceMs !== undefined ? { debounceMs: options.debounceMs } : {}),
    ...(options.readyDelayMs !== undefined ? { readyDelayMs: options.readyDelayMs } : {}),
  });
  const diffs = new DiffRegistry(editor, log.child("diff"));
  const pids = new Map<number, number>();
  const listeners = new Set<
    (event: { type: "connected" | "disconnected"; connectionId: number; pid?: number }) => void
  >();
  const emit = (event: { type: "connected" | "disconnected"; connectionId: number; pid?: number }) => {
    for (const l of listeners) l(event);
  };
  let nextId = 1;

  const offEditor = editor.onEvent((e) => {
    if (e.type === "selection") notifier.selection(e.selection);
    else notifier.atMentioned({ filePath: e.filePath, lineStart: e.lineStart, lineEnd: e.lineEnd });
  });

  const sockets = await startSocketServer({
    authToken,
    log,
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.maxPayloadBytes !== undefined ? { maxPayloadBytes: options.maxPayloadBytes } : {}),
    ...(options.pingIntervalMs !== undefined ? { pingIntervalMs: options.pingIntervalMs } : {}),
    onConnection(ws) {
      const id = nextId++;
      attachSession(ws, id, {
        core,
        editor,
        workspace: core.workspace,
        diffs,
        notifier,
        log,
        serverInfo: { name: "ccb", version: CCB_VERSION },
        onClientPid(connectionId, pid) {
          pids.set(connectionId, pid);
          emit({ type: "connected", connectionId, pid });
        },
        onClosed(connectionId) {
          pids.delete(connectionId);
          emit({ type: "disconnected", connectionId });
        },
      });
    },
  });

  const workspaceFolders = [...core.workspace.roots];
  const ideName = ideNameFor(workspaceFolders, { label: options.frontEndLabel ?? "ccb ide", pid: process.pid });
  const lockPath = writeLock(dir, sockets.port, {
    pid: process.pid,
    workspaceFolders,
    ideName,
    transport: "ws",
    authToken,
    runningInWindows: process.platform === "win32",
  });
  const onExit = () => removeLock(lockPath, authToken);
  process.on("exit", onExit);
  log.info(`IDE server listening on 127.0.0.1:${sockets.port} (${ideName}); lock file ${lockPath}`);

  let closing: Promise<void> | undefined;
  return {
    port: sockets.port,
    url: `ws://127.0.0.1:${sockets.port}`,
    lockPath,
    ideName,
    workspaceFolders,
    authToken,
    notifier,
    diffs,
    clientCount: () => sockets.clients.size,
    stats: () => sockets.stats(),
    clientPids: () => [...pids.values()],
    onClient(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      closing ??= (async () => {
        removeLock(lockPath, authToken);
        process.off("exit", onExit);
        offEditor();
        await diffs.closeAll();
        await sockets.close();
        notifier.dispose();
        ownEditor?.dispose();
      })();
      return closing;
    },
  };
}
