import { chmodSync, lstatSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { writeSecretFile } from "../util/secrets.ts";
import { CcbError } from "./errors.ts";
import { ownedPrivateDir } from "./files/safe/private.ts";
import { registerSecret } from "./secret-vault.ts";

/**
 * ccb's secret store for the model credential a person signed in with (`ccb acp --login`):
 * `<config dir>/secrets/anthropic.json`, mode 0600 in a folder of mode 0700, written atomically.
 * The key is read by the process that talks to the model; it is never put in an environment, on a
 * command line or in a log, and every value read is registered for masking.
 */

const FILE = "anthropic.json";

interface StoredFile {
  version: 1;
  anthropicApiKey: string;
  savedAt: string;
}

export class CredentialStore {
  readonly dir: string;
  readonly path: string;

  /** `configDir`: ccb's config folder ($XDG_CONFIG_HOME/ccb or ~/.config/ccb). */
  constructor(configDir: string) {
    this.dir = join(configDir, "secrets");
    this.path = join(this.dir, FILE);
  }

  /** The stored Anthropic API key, or undefined when none is stored (or the file is not ccb's). */
  read(): string | undefined {
    let raw: string;
    try {
      const st = lstatSync(this.path);
      // a symlink or a file others can read is not trusted (and not followed)
      if (!st.isFile() || (st.mode & 0o077) !== 0) return undefined;
      const uid = process.getuid?.();
      if (uid !== undefined && st.uid !== uid) return undefined;
      raw = readFileSync(this.path, "utf8");
    } catch {
      return undefined;
    }
    try {
      const parsed = JSON.parse(raw) as Partial<StoredFile>;
      const key = typeof parsed.anthropicApiKey === "string" ? parsed.anthropicApiKey.trim() : "";
      if (!key) return undefined;
      registerSecret(key);
      return key;
    } catch {
      return undefined;
    }
  }

  /** Store `key` (replacing any earlier one): the folder is made or tightened to 0700 first. */
  write(key: string): void {
    this.ensureDir();
    registerSecret(key);
    const content: StoredFile = { version: 1, anthropicApiKey: key, savedAt: new Date().toISOString() };
    writeSecretFile(this.path, `${JSON.stringify(content)}\n`);
  }

  /** Remove the stored key; whether there was one. */
  remove(): boolean {
    try {
      unlinkSync(this.path);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw new CcbError("PERMISSION_DENIED", `Cannot remove ${this.path}: ${(err as Error).message}`);
    }
  }

  private ensureDir(): void {
    if (ownedPrivateDir(this.dir)) return;
    // an existing folder of ours that is too open is tightened; anything else is refused
    try {
      const st = lstatSync(this.dir);
      const uid = process.getuid?.();
      if (st.isDirectory() && !st.isSymbolicLink() && (uid === undefined || st.uid === uid)) chmodSync(this.dir, 0o700);
    } catch {
      // reported below
    }
    if (!ownedPrivateDir(this.dir))
      throw new CcbError("PERMISSION_DENIED", `${this.dir} is not a directory owned by you with mode 0700.`, {
        hint: `Remove ${this.dir} and sign in again.`,
      });
  }
}
