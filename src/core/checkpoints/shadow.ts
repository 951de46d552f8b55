import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { CcbError } from "../errors.ts";
import { ccbGlobalConfig, ceilingFor, configOverrides, gitEnv } from "../git/env.ts";
import { execGit } from "../git/exec.ts";

/**
 * One shadow git repository: `GIT_DIR` = a private folder under ccb's state folder, work tree = one
 * workspace root. It runs through ccb's hardened git (git/env.ts: a fixed environment, no system
 * config, a ccb-owned global one, `-c` overrides that fix every program git could start, hooks off)
 * and reads nothing of the workspace's own repository: its config, hooks and index are never
 * consulted, only the work tree's `.gitignore` files. Pathspecs are literal.
 */
export class ShadowRepo {
  constructor(
    /** The real workspace root (the work tree). */
    readonly root: string,
    /** The shadow GIT_DIR. */
    readonly gitDir: string,
    private readonly gitPath = "git",
  ) {}

  #env: Promise<Record<string, string>> | undefined;

  private env(): Promise<Record<string, string>> {
    this.#env ??= (async () => {
      const ceiling = ceilingFor(this.root);
      return {
        ...gitEnv({ globalConfig: await ccbGlobalConfig(this.gitPath), ...(ceiling ? { ceiling } : {}) }),
        GIT_AUTHOR_NAME: "ccb",
        GIT_AUTHOR_EMAIL: "ccb@localhost",
        GIT_COMMITTER_NAME: "ccb",
        GIT_COMMITTER_EMAIL: "ccb@localhost",
      };
    })();
    return this.#env;
  }

  /** Run git on the shadow; throws GIT_FAILED on a non-zero exit unless `allowFail`. */
  async git(
    args: readonly string[],
    o: {
      maxBytes?: number;
      timeoutMs?: number;
      allowFail?: boolean;
      env?: Record<string, string>;
      init?: boolean;
      input?: string | Buffer;
    } = {},
  ): Promise<{ code: number; stdout: Buffer; stderr: string }> {
    const argv = [
      ...(o.init ? [] : [`--git-dir=${this.gitDir}`, `--work-tree=${this.root}`]),
      "--literal-pathspecs",
      ...configOverrides({ noFileProtocol: true }).flatMap((kv) => ["-c", kv]),
      "-c",
      "core.autocrlf=false",
      "-c",
      "core.safecrlf=false",
      "-c",
      "core.quotepath=false",
      "-c",
      "gc.auto=0",
      "-c",
      "core.untrackedCache=true",
      ...args,
    ];
    const env = o.env ? { ...(await this.env()), ...o.env } : await this.env();
    const r = await execGit(this.gitPath, argv, {
      cwd: this.root,
      env,
      timeoutMs: o.timeoutMs ?? 120_000,
      maxBytes: o.maxBytes ?? 64 * 1024 * 1024,
      ...(o.input !== undefined ? { input: o.input } : {}),
    });
    const code = r.exitCode ?? -1;
    if (r.timedOut) throw new CcbError("TIMEOUT", `The checkpoint store's git ${args[0]} timed out.`);
    if (code !== 0 && !o.allowFail) {
      throw new CcbError("GIT_FAILED", `The checkpoint store's git ${args[0]} failed: ${firstLine(r.stderr)}`);
    }
    return { code, stdout: r.stdout, stderr: r.stderr.toString("utf8") };
  }

  /** Create the shadow repository if it is not there (no templates: no sample hooks). */
  async init(excludes: readonly string[]): Promise<void> {
    await mkdir(this.gitDir, { recursive: true, mode: 0o700 });
    const head = await this.git(["rev-parse", "--git-dir"], { allowFail: true });
    if (head.code !== 0) {
      await this.git(["init", "-q", "--bare", "--template=", this.gitDir], { init: true });
    }
    await mkdir(join(this.gitDir, "info"), { recursive: true, mode: 0o700 });
    // The store itself (when the state folder lies inside a root) and VCS internals are never recorded;
    // attributes that would convert content on the way in or out are off for every path.
    await writeFile(join(this.gitDir, "info", "exclude"), `${excludes.join("\n")}\n`, {
      mode: 0o600,
    });
    await writeFile(join(this.gitDir, "info", "attributes"), "* -text -filter -ident -working-tree-encoding\n", {
      mode: 0o600,
    });
  }
}

/** A folder strictly inside `root`, as an anchored ignore line (special characters escaped), or none. */
export function excludeLine(root: string, folder: string): string | undefined {
  const rel = relative(root, folder);
  if (rel === "" || rel.startsWith("..") || rel.startsWith(sep)) return undefined;
  return `/${rel
    .split(sep)
    .map((part) => part.replace(/[\\*?[\]!#\s]/g, (c) => `\\${c}`))
    .join("/")}/`;
}

function firstLine(b: Buffer): string {
  return (b.toString("utf8").split("\n", 1)[0] ?? "").slice(0, 300);
}

/** The key of a set of real roots: the same for every ccb process of the workspace. */
export function rootsKey(roots: readonly string[]): string {
  return createHash("sha256").update(roots.join("\0")).digest("hex").slice(0, 32);
}
