import { isAbsolute, resolve } from "node:path";
import type { Core } from "../../core/core.ts";
import { CcbError, isCcbError } from "../../core/errors.ts";
import type { ClientTerminals } from "../peer.ts";

/** The client's own file access and terminals, where a client offers them (v1's `fs` and `terminal`). */
export interface ClientOffer {
  readText?: ((sessionId: string, path: string, signal: AbortSignal) => Promise<string>) | undefined;
  writeText?: ((sessionId: string, path: string, text: string, signal: AbortSignal) => Promise<void>) | undefined;
  terminals?: ClientTerminals | undefined;
}

/**
 * File access for tools: through the client's files when it offers them (so unsaved editor buffers
 * are seen and edits land in the editor), else the core's FileService. Paths are always confined
 * to the session's workspace first.
 */
export interface ClientIO {
  /** Absolute, confined path. */
  resolve(path: string): Promise<string>;
  /** File text, or null when the file does not exist. */
  readText(abs: string, signal: AbortSignal): Promise<string | null>;
  writeText(abs: string, text: string, signal: AbortSignal): Promise<void>;
  /** The client's terminals, when it offers them (else commands run on the core's PTYs). */
  readonly terminals: ClientTerminals | undefined;
}

export function createClientIO(offer: ClientOffer, core: Core, sessionId: string, cwd: string): ClientIO {
  return {
    terminals: offer.terminals,
    async resolve(path: string) {
      const p = isAbsolute(path) ? path : resolve(cwd, path);
      return (await core.workspace.resolve(p)).abs;
    },
    async readText(abs, signal) {
      if (offer.readText) {
        const exists = (await core.workspace.resolve(abs)).exists;
        if (!exists) return null;
        return await offer.readText(sessionId, abs, signal);
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
      if (offer.writeText) {
        // confined like every write: resolve() above, and the workspace once more here
        await offer.writeText(sessionId, (await core.workspace.resolve(abs)).abs, text, signal);
        return;
      }
      await core.files.write(abs, text, { createParents: true, signal });
    },
  };
}
