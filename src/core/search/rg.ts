import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { access, lstat, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { createInterface } from "node:readline";
import { CcbError } from "../errors.ts";
import { ancestorIgnores, rewriteAnchoredAtRoot } from "../files/rules.ts";
import {
  capLine,
  chompLine,
  type EngineQuery,
  type EngineResult,
  MAX_SEARCH_FILE_BYTES,
  type RawMatch,
} from "./common.ts";

/** Find an executable `rg` on PATH. */
export async function findRgOnPath(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, process.platform === "win32" ? "rg.exe" : "rg");
    if (
      await access(p, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return p;
  }
  return undefined;
}

/** `rg --version` first line, or undefined when it does not run. */
export async function rgVersion(rgPath: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(rgPath, ["--version"], { stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", () => resolve(undefined));
    child.on("close", (code) => resolve(code === 0 ? out.split("\n")[0]?.trim() : undefined));
  });
}

interface RgText {
  text?: string;
  bytes?: string;
}

function decode(t: RgText | undefined): string {
  if (!t) return "";
  return t.text ?? Buffer.from(t.bytes ?? "", "base64").toString("utf8");
}

function rawBytes(t: RgText | undefined): Buffer {
  if (!t) return Buffer.alloc(0);
  return t.bytes !== undefined ? Buffer.from(t.bytes, "base64") : Buffer.from(t.text ?? "", "utf8");
}

/** The ripgrep argument list for a query (exported for tests and the benchmark). */
export function rgArgs(q: EngineQuery, ignoreFile: string | undefined): string[] {
  const args = [
    "--json",
    "--no-config",
    "--no-require-git",
    "--no-ignore-parent",
    "--no-ignore-dot",
    "--no-ignore-exclude",
    "--no-ignore-global",
    "--max-filesize",
    String(MAX_SEARCH_FILE_BYTES),
  ];
  args.push(q.ignoreCase ? "--ignore-case" : "--case-sensitive");
  if (!q.regex) args.push("--fixed-strings");
  if (q.contextLines > 0) args.push("--context", String(q.contextLines));
  if (!q.respectGitignore) args.push("--no-ignore-vcs");
  if (q.includeHidden) args.push("--hidden");
  for (const g of q.include) args.push("--glob", g);
  for (const g of q.exclude) args.push("--glob", `!${g}`);
  if (q.respectGitignore) args.push("--glob", "!.git/");
  if (ignoreFile) args.push("--ignore-file", ignoreFile);
  args.push("--regexp", q.query, "--", q.startRel === "" ? "." : q.startRel);
  return args;
}

/**
 * Run `rg --json` for one query, with the workspace root as cwd so paths and globs are relative
 * to it. `.gitignore` files of the start's ancestors (inside the root) are passed as one
 * re-anchored `--ignore-file`. The process is killed on abort and once `limit` matches arrived.
 */
export async function searchRg(rgPath: string, q: EngineQuery): Promise<EngineResult> {
  let ignoreFile: string | undefined;
  if (q.respectGitignore && !q.startIsFile && q.startRel !== "") {
    const lines = rewriteAnchoredAtRoot(await ancestorIgnores(q.rootAbs, q.startRel));
    if (lines.length > 0) {
      ignoreFile = join(tmpdir(), `ccb-rg-ignore-${randomBytes(8).toString("hex")}`);
      await writeFile(ignoreFile, `${lines.join("\n")}\n`, { mode: 0o600 });
    }
  }
  try {
    return await runRg(rgPath, rgArgs(q, ignoreFile), q);
  } finally {
    if (ignoreFile) await unlink(ignoreFile).catch(() => undefined);
  }
}

async function isHardlinked(abs: string): Promise<boolean> {
  const st = await lstat(abs).catch(() => undefined);
  return !st || (st.isFile() && st.nlink > 1);
}

/** Before/after context of each match from the lines ripgrep printed for its file. */
function attachContext(pending: RawMatch[], fileLines: Map<number, string>, n: number): void {
  if (n === 0) return;
  for (const m of pending) {
    const before: string[] = [];
    for (let l = Math.max(1, m.line - n); l < m.line; l++) {
      const t = fileLines.get(l);
      if (t !== undefined) before.push(t);
    }
    const after: string[] = [];
    for (let l = m.line + 1; l <= m.line + n; l++) {
      const t = fileLines.get(l);
      if (t === undefined) break;
      after.push(t);
    }
    m.before = before;
    m.after = after;
  }
}

function runRg(rgPath: string, args: string[], q: EngineQuery): Promise<EngineResult> {
  return new Promise((resolve, reject) => {
    if (q.signal?.aborted) return reject(new CcbError("ABORTED", "The operation was cancelled."));
    const env = { ...process.env };
    delete env.RIPGREP_CONFIG_PATH;
    const child = spawn(rgPath, args, { cwd: q.rootAbs, env, stdio: ["ignore", "pipe", "pipe"] });
    const matches: RawMatch[] = [];
    let stopped = false;
    let aborted = false;
    let stderr = "";
    // The file being printed: its lines (match and context) and its matches. ripgrep prints
    // each file's results as one block (begin ... end), also when searching in parallel.
    let fileLines = new Map<number, string>();
    let pending: RawMatch[] = [];
    let rel = "";
    // Files are accepted in order, after a hard-link check (a regular file with several links is
    // skipped, as the JS engine does), so the cap counts only what is returned.
    let chain: Promise<void> = Promise.resolve();
    const endFile = () => {
      const file = { rel, pending, fileLines };
      pending = [];
      fileLines = new Map();
      if (file.pending.length === 0) return;
      chain = chain.then(async () => {
        if (stopped || (await isHardlinked(join(q.rootAbs, file.rel)))) return;
        attachContext(file.pending, file.fileLines, q.contextLines);
        matches.push(...file.pending);
        if (matches.length >= q.limit) {
          stopped = true;
          child.kill();
        }
      });
    };
    const onAbort = () => {
      aborted = true;
      child.kill();
    };
    q.signal?.addEventListener("abort", onAbort, { once: true });
    child.stderr.on("data", (d: Buffer) => {
      if (stderr.length < 8192) stderr += d.toString();
    });
    const rl = createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY });
    rl.on("line", (line) => {
      if (stopped || aborted || line === "") return;
      let msg: { type: string; data: Record<string, unknown> };
      try {
        msg = JSON.parse(line);
      } catch {
        return;
      }
      const d = msg.data;
      if (msg.type === "begin") {
        endFile();
        rel = decode(d.path as RgText).replace(/^\.\//, "");
      } else if (msg.type === "match" || msg.type === "context") {
        const lineNo = d.line_number as number;
        const text = capLine(chompLine(decode(d.lines as RgText)));
        fileLines.set(lineNo, text);
        if (msg.type === "match") {
          const sub = (d.submatches as Array<{ start: number }>)[0];
          const column = sub
            ? rawBytes(d.lines as RgText)
                .subarray(0, sub.start)
                .toString("utf8").length + 1
            : 1;
          pending.push({ rel, line: lineNo, column, text });
        }
      } else if (msg.type === "end") {
        endFile();
      }
    });
    child.on("error", (err) => {
      q.signal?.removeEventListener("abort", onAbort);
      reject(
        new CcbError("INTERNAL", `ripgrep could not start: ${err.message}`, {
          cause: err,
          details: { engine: "ripgrep" },
        }),
      );
    });
    child.on("close", (code) => {
      q.signal?.removeEventListener("abort", onAbort);
      rl.close();
      if (!stopped && !aborted) endFile();
      chain.then(() => {
        if (aborted) return reject(new CcbError("ABORTED", "The operation was cancelled."));
        if (
          code === 2 &&
          !stopped &&
          matches.length === 0 &&
          /regex parse error|error parsing|unrecognized escape/i.test(stderr)
        ) {
          return reject(
            new CcbError(
              "INVALID_ARGUMENT",
              `Invalid regular expression: ${stderr.trim().split("\n").slice(-3).join(" ")}`,
              {
                hint: "Fix the pattern (the syntax common to JavaScript and Rust regex: no look-around or back-references), or pass regex: false to search literally.",
              },
            ),
          );
        }
        // ripgrep's JSON summary counts only files with matches, so no filesSearched here.
        resolve({ matches: stopped ? matches.slice(0, q.limit) : matches, stopped });
      }, reject);
    });
  });
}
