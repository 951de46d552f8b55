import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Core, createCore } from "../../src/core/core.ts";
import { silentLogger } from "../../src/core/log.ts";
import { type IdeServer, type StartIdeOptions, startIde } from "../../src/protocols/ide/ide.ts";
import { IdeClient } from "./ide-client.ts";
import { EditorDouble } from "./ide-editor-double.ts";
import { tmpdirFixture } from "./tmp.ts";

/** An in-process IDE server over a real temp workspace, a real socket and an editor double. */
export interface TestIde {
  dir: string;
  workspace: string;
  lockDir: string;
  core: Core;
  editor: EditorDouble;
  ide: IdeServer;
  clients: IdeClient[];
  connect(): Promise<IdeClient>;
  /** Connect and do the CLI's handshake. */
  ready(): Promise<IdeClient>;
  close(): Promise<void>;
}

export async function startTestIde(
  options: Partial<StartIdeOptions> & { files?: Record<string, string> } = {},
): Promise<TestIde> {
  const tmp = tmpdirFixture({ prefix: "ccb-ide-" });
  const workspace = join(tmp.path, "project");
  mkdirSync(workspace);
  for (const [name, body] of Object.entries(options.files ?? {})) {
    mkdirSync(join(workspace, name, ".."), { recursive: true });
    writeFileSync(join(workspace, name), body);
  }
  const lockDir = join(tmp.path, "claude", "ide");
  const core = createCore({ roots: [workspace], log: silentLogger });
  const editor = new EditorDouble();
  const ide = await startIde({
    core,
    log: silentLogger,
    editor,
    lockDir,
    readyDelayMs: 20,
    debounceMs: 20,
    ...options,
  });
  const clients: IdeClient[] = [];
  const t: TestIde = {
    dir: tmp.path,
    workspace,
    lockDir,
    core,
    editor,
    ide,
    clients,
    async connect() {
      const c = await IdeClient.connect(ide.port, ide.authToken);
      clients.push(c);
      return c;
    },
    async ready() {
      const c = await t.connect();
      await c.handshake();
      return c;
    },
    async close() {
      for (const c of clients) c.ws.terminate();
      await Promise.all(clients.map((c) => c.closed));
      await ide.close();
      await core.dispose();
      tmp.cleanup();
    },
  };
  return t;
}
