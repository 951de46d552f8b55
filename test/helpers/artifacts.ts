import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { afterEach } from "node:test";
import { fileURLToPath } from "node:url";
import { type Logger, redact } from "../../src/core/log.ts";

/**
 * What a failed end-to-end test leaves behind, so its cause can be read without running it again.
 *
 * The helpers that start something worth reading register a source while it runs (`artifactSource`):
 * `bootWorkbench` (ccb serve's stderr, the workbench host's and the runtime's logs),
 * `startWorkbenchIde` (ccb's log at debug, the runtime's logs), `openPersonWindow` (the page's
 * screenshot, console and what is on screen). Every test file keeps them (`keepArtifacts`, preloaded
 * by the test runner's `--import` of keep-failed.ts): a test that fails saves every live source under
 * `.cache/test-artifacts/<file>/<test>/` (or `$CCB_TEST_ARTIFACTS/<file>/<test>/`) and prints that
 * folder. A set-up that fails saves them too (`saveArtifacts`, called by the helpers' own boot and by
 * `keptBefore`). Nothing is retried and nothing changes for a test that passes.
 */

export type Artifacts = Record<string, string | Uint8Array>;

interface Source {
  name: string;
  collect: () => Promise<Artifacts> | Artifacts;
}

const sources = new Set<Source>();
let fileName = "unknown";

const repoRoot = () => process.env.CCB_REPO_ROOT ?? fileURLToPath(new URL("../..", import.meta.url));

/** The folder the artifacts of this run go to (the soak script gives each round its own). */
export function artifactsRoot(): string {
  return process.env.CCB_TEST_ARTIFACTS ?? join(repoRoot(), ".cache/test-artifacts");
}

/** Register what to save if a test fails while it runs; the returned function unregisters it. */
export function artifactSource(name: string, collect: Source["collect"]): () => void {
  const s = { name, collect };
  sources.add(s);
  return () => sources.delete(s);
}

let keeping = false;

/**
 * Save the artifacts of a test that failed. `npm test` and the soak call it for every test file
 * (test/helpers/keep-failed.ts, preloaded); a file's own call at its top is then a no-op.
 */
export function keepArtifacts(metaUrl: string): void {
  if (keeping) return;
  keeping = true;
  fileName = basename(fileURLToPath(metaUrl)).replace(/\.test\.ts$/, "");
  afterEach(async (t) => {
    const ctx = t as unknown as { passed?: boolean; error?: unknown; fullName?: string; name: string };
    if (ctx.passed !== false) return;
    await saveArtifacts(ctx.fullName ?? ctx.name, ctx.error);
  });
}

/** `before(keptBefore(fn))`: a set-up that throws saves what its sources hold before the error goes on. */
export function keptBefore(fn: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await fn();
    } catch (err) {
      await saveArtifacts("before", err);
      throw err;
    }
  };
}

const slug = (s: string) =>
  s
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 100) || "test";

/** The longest time one source may take (a page that hangs must not hang the test's failure). */
const COLLECT_MS = 15_000;

/** Save every live source into `<root>/<file>/<label>/` and print the folder; the folder, or undefined with no source. */
export async function saveArtifacts(label: string, cause?: unknown): Promise<string | undefined> {
  if (sources.size === 0) return undefined;
  const dir = join(artifactsRoot(), fileName, slug(label));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  if (cause !== undefined) {
    const c = cause as { cause?: unknown; stack?: string };
    const inner = c.cause as { stack?: string } | undefined;
    writeFileSync(join(dir, "error.txt"), `${inner?.stack ?? c.stack ?? String(cause)}\n`);
  }
  const written: string[] = [];
  for (const s of [...sources]) {
    let timer: NodeJS.Timeout | undefined;
    try {
      const files = await Promise.race([
        Promise.resolve().then(s.collect),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`collecting took over ${COLLECT_MS} ms`)), COLLECT_MS);
        }),
      ]);
      for (const [name, body] of Object.entries(files)) {
        const file = `${s.name}.${name.replace(/[/\\]/g, "_")}`;
        writeFileSync(join(dir, file), body);
        written.push(file);
      }
    } catch (err) {
      writeFileSync(join(dir, `${s.name}.error.txt`), `${(err as Error).stack ?? String(err)}\n`);
      written.push(`${s.name}.error.txt`);
    } finally {
      clearTimeout(timer);
    }
  }
  process.stderr.write(`# test artifacts: ${dir} (${written.join(", ")})\n`);
  return dir;
}

/** The last `max` bytes of a file (a log that grew large keeps its end, where a failure is). */
function tail(path: string, max = 2 * 1024 * 1024): string {
  const text = readFileSync(path, "utf8");
  return text.length > max ? text.slice(-max) : text;
}

/**
 * The logs a workbench wrote under an XDG_STATE_HOME: the hosts' `ccb/workbenches/<key>.host.log` and
 * the runtime's own logs (code-server's and its extension host's `logs/**.log`), keyed by their path.
 */
export function stateLogs(stateHome: string): Artifacts {
  const base = join(stateHome, "ccb");
  const out: Artifacts = {};
  const walk = (d: string, depth: number): void => {
    if (depth > 12 || !existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name === "node_modules" || e.name === "extensions" || e.name === "CachedData") continue;
        walk(p, depth + 1);
      } else if (e.isFile() && (e.name.endsWith(".host.log") || (p.includes("/logs/") && e.name.endsWith(".log")))) {
        try {
          if (statSync(p).size > 0) out[relative(base, p)] = tail(p);
        } catch {
          // rotated or removed meanwhile
        }
      }
    }
  };
  try {
    walk(base, 0);
  } catch {
    // the folder went away: nothing to keep
  }
  return out;
}

/**
 * A logger that keeps every line (debug too, redacted, the last 20,000) besides passing it on to
 * `log` at that logger's own level: an in-process ccb's log, saved when a test fails.
 */
export function recordingLogger(log: Logger): { log: Logger; lines: () => string } {
  const kept: string[] = [];
  const make = (inner: Logger, tag: string): Logger => {
    const rec =
      (level: string, f: (m: string, ...a: unknown[]) => void) =>
      (m: string, ...a: unknown[]) => {
        const rest = a.map((x) => (x instanceof Error ? x.message : typeof x === "string" ? x : safeJson(x)));
        kept.push(redact(`${new Date().toISOString()} ${level}${tag ? ` [${tag}]` : ""} ${[m, ...rest].join(" ")}`));
        if (kept.length > 20_000) kept.splice(0, kept.length - 20_000);
        f.call(inner, m, ...a);
      };
    return {
      debug: rec("debug", inner.debug),
      info: rec("info", inner.info),
      warn: rec("warn", inner.warn),
      error: rec("error", inner.error),
      child: (t) => make(inner.child(t), tag ? `${tag}:${t}` : t),
    };
  };
  return { log: make(log, ""), lines: () => `${kept.join("\n")}\n` };
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}
