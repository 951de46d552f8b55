import { isAbsolute, resolve } from "node:path";
import type { ClientCapabilities } from "@agentclientprotocol/sdk/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import type { Core } from "../../core/core.ts";
import { CcbError, isCcbError } from "../../core/errors.ts";

/**
 * File access for tools: through the client's fs/* when it offers them (so unsaved editor buffers
 * are seen and edits land in the editor), else the core's FileService. Paths are always confined
 * to the session's workspace first.
 */
export interface ClientIO {
  readonly caps: ClientCapabilities;
  /** Absolute, confined path. */
  resolve(path: string): Promise<string>;
  /** File text, or null when the file does not exist. */
  readText(abs: string, signal: AbortSignal): Promise<string | null>;
  writeText(abs: string, text: string, signal: AbortSignal): Promise<void>;
  client: acp.AgentContext;
}

export function createClientIO(
  client: acp.AgentContext,
  caps: ClientCapabilities,
  core: Core,
  sessionId: string,
  cwd: string,
): ClientIO {
  return {
    caps,
    client,
    async resolve(path: string) {
      const p = isAbsolute(path) ? path : resolve(cwd, path);
      return (await core.workspace.resolve(p)).abs;
    },
    async readText(abs, signal) {
      if (caps.fs?.readTextFile) {
        const exists = (await core.workspace.resolve(abs)).exists;
        if (!exists) return null;
        const r = await client.request(
          acp.methods.client.fs.readTextFile,
          { sessionId, path: abs },
          { cancellationSignal: signal },
        );
        return r.content;
      }
      try {
        const r = await core.files.read(abs, { signal });
        if (r.binary)
          throw new CcbError("BINARY_FILE", `Binary file: ${abs}`, { hint: "Only text files can be read or edited." });
        return r.content;
      } catch (err) {
        if (isCcbError(err, "NOT_FOUND")) return null;
        throw err;
      }
    },
    async writeText(abs, text, signal) {
      if (caps.fs?.writeTextFile) {
        await client.request(
          acp.methods.client.fs.writeTextFile,
          { sessionId, path: abs, content: text },
          { cancellationSignal: signal },
        );
        return;
      }
      await core.files.write(abs, text, { createParents: true, signal });
    },
  };
}
