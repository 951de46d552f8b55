import type { ArgDef, CommandDef, CommandMeta, Resolvable } from "citty";

/**
 * The layer over citty that every command goes through (cli/main.ts): it resolves the subcommand,
 * refuses unknown flags and commands with a suggestion (exit 2; citty ignores them), and renders
 * plain-text help. Arguments after `--` belong to a child command and are never inspected.
 */

export class UsageError extends Error {}

// biome-ignore lint/suspicious/noExplicitAny: a command of any argument shape (citty's CommandDef is invariant in it)
type Cmd = CommandDef<any>;

async function resolve<T>(v: Resolvable<T> | undefined): Promise<T | undefined> {
  return typeof v === "function" ? await (v as () => T | Promise<T>)() : await v;
}

export interface Resolved {
  cmd: Cmd;
  /** Subcommand names from the root, e.g. ["runtime", "fetch"]. */
  path: string[];
  /** ccb's own arguments for `cmd` (before `--`, without the subcommand names). */
  own: string[];
}

/** Walk subcommand names; the first non-flag word at a level with subcommands must name one. */
export async function resolveCommand(root: Cmd, argv: string[]): Promise<Resolved> {
  const dash = argv.indexOf("--");
  let own = dash === -1 ? [...argv] : argv.slice(0, dash);
  let cmd = root;
  const path: string[] = [];
  for (;;) {
    const subs = await resolve(cmd.subCommands);
    if (!subs) break;
    const i = own.findIndex((a) => !a.startsWith("-"));
    if (i === -1) break;
    const name = own[i] as string;
    const next = subs[name];
    if (!next) {
      const where = ["ccb", ...path].join(" ");
      throw new UsageError(`${where}: unknown command "${name}".${suggest(name, Object.keys(subs), "")}`, {
        cause: { path },
      });
    }
    cmd = (await resolve(next)) as Cmd;
    path.push(name);
    own = [...own.slice(0, i), ...own.slice(i + 1)];
  }
  return { cmd, path, own };
}

interface FlagSpec {
  name: string;
  def: ArgDef;
}

async function flagSpecs(cmd: Cmd): Promise<FlagSpec[]> {
  const args = ((await resolve(cmd.args)) ?? {}) as Record<string, ArgDef>;
  return Object.entries(args)
    .filter(([, d]) => d.type !== "positional")
    .map(([name, def]) => ({ name, def }));
}

const aliases = (d: ArgDef): string[] => {
  const a = (d as { alias?: string | string[] }).alias;
  return a === undefined ? [] : Array.isArray(a) ? a : [a];
};
const takesValue = (d: ArgDef): boolean => d.type === "string" || d.type === "enum";

/** Refuse flags the command does not define, and stray words where it takes none. */
export async function checkFlags(r: Resolved, isRoot: boolean): Promise<void> {
  const specs = await flagSpecs(r.cmd);
  const where = ["ccb", ...r.path].join(" ");
  const long = new Map<string, ArgDef>();
  const short = new Map<string, ArgDef>();
  for (const s of specs) {
    long.set(s.name, s.def);
    for (const a of aliases(s.def)) (a.length === 1 ? short : long).set(a, s.def);
    if (s.def.type === "boolean" && !s.name.startsWith("no-")) long.set(`no-${s.name}`, s.def);
  }
  long.set("help", { type: "boolean" });
  short.set("h", { type: "boolean" });
  if (isRoot) {
    long.set("version", { type: "boolean" });
    short.set("v", { type: "boolean" });
  }
  const positional = specs.length !== Object.keys(((await resolve(r.cmd.args)) ?? {}) as object).length;
  for (let i = 0; i < r.own.length; i++) {
    const a = r.own[i] as string;
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const name = a.slice(2, eq === -1 ? undefined : eq);
      const def = long.get(name);
      if (!def)
        throw new UsageError(
          `${where}: unknown flag --${name}.${suggest(name, [...long.keys()], "--")} Run \`${where} --help\` for its flags.`,
        );
      if (takesValue(def) && eq === -1) {
        if (r.own[i + 1] === undefined)
          throw new UsageError(`${where}: --${name} needs a value${def.valueHint ? ` (<${def.valueHint}>)` : ""}.`);
        i++;
      }
    } else if (a.startsWith("-") && a.length > 1) {
      const name = a.slice(1, 2);
      const def = short.get(name);
      if (!def) throw new UsageError(`${where}: unknown flag ${a}. Run \`${where} --help\` for its flags.`);
      if (takesValue(def) && a.length === 2) {
        if (r.own[i + 1] === undefined) throw new UsageError(`${where}: -${name} needs a value.`);
        i++;
      }
    } else if (!positional) {
      throw new UsageError(`${where}: unexpected argument "${a}". Run \`${where} --help\` for usage.`);
    }
  }
}

function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[];
      const prev = d[i - 1] as number[];
      row[j] = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/** " Did you mean --workspace?" for the closest candidate within a few edits, else "". */
export function suggest(word: string, candidates: string[], prefix: string): string {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const dd = distance(word, c);
    if (dd < bestD) [best, bestD] = [c, dd];
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(word.length / 3))
    ? ` Did you mean ${prefix}${best}?`
    : "";
}

/** Extra usage and environment lines per command path (what the args table cannot say). */
const USAGE: Record<string, string> = {
  "": "ccb <command> [flags]",
  ide: "ccb ide [flags] [-- <command> [args...]]",
  link: "ccb link [flags] [-- <agent command> [args...]]",
  runtime: "ccb runtime <command> [flags]",
};
const ENV: Record<string, Array<[string, string]>> = {
  acp: [
    ["ANTHROPIC_API_KEY", "API key for the Anthropic Messages API (or ANTHROPIC_AUTH_TOKEN, a bearer token)"],
    ["ANTHROPIC_BASE_URL", "Messages API base URL (default https://api.anthropic.com)"],
    ["ANTHROPIC_MODEL", "model id to use"],
    ["CCB_DATA_DIR", "where sessions and permission rules are stored (default $XDG_DATA_HOME/ccb)"],
    ["CCB_LOG_LEVEL, CCB_LOG_FILE", "as --log-level and --log-file"],
  ],
};

function wrap(text: string, width: number, indent: number): string[] {
  const out: string[] = [];
  for (const para of text.split("\n")) {
    // A line that fits is kept as written (descriptions may hold small aligned lists).
    if (para.length <= width - indent) {
      out.push(para);
      continue;
    }
    const lead = /^\s*/.exec(para)?.[0] ?? "";
    let line = "";
    for (const word of para.split(/\s+/).filter(Boolean)) {
      if (line && lead.length + line.length + 1 + word.length > width - indent) {
        out.push(`${lead}${line}`);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    out.push(`${lead}${line}`);
  }
  return out;
}

function table(rows: Array<[string, string]>, width: number): string {
  const col = Math.min(32, Math.max(...rows.map(([l]) => l.length)) + 4);
  const lines: string[] = [];
  for (const [left, right] of rows) {
    const body = wrap(right, width, col);
    const head = `  ${left}`;
    if (head.length + 2 > col) {
      lines.push(head);
      for (const b of body) lines.push(`${" ".repeat(col)}${b}`);
    } else {
      lines.push(`${head.padEnd(col)}${body[0] ?? ""}`);
      for (const b of body.slice(1)) lines.push(`${" ".repeat(col)}${b}`);
    }
  }
  return lines.join("\n");
}

/** Plain-text help for a resolved command (no colours: it is read in pipes and logs too). */
export async function renderHelp(r: Resolved, version: string): Promise<string> {
  const width = Math.min(process.stdout.isTTY ? (process.stdout.columns ?? 100) : 100, 120);
  const meta = ((await resolve(r.cmd.meta)) ?? {}) as CommandMeta;
  const key = r.path.join(" ");
  const name = ["ccb", ...r.path].join(" ");
  const parts: string[] = [];
  parts.push(r.path.length === 0 ? `ccb ${version}` : name);
  parts.push(`Usage: ${USAGE[key] ?? `${name} [flags]`}`);
  if (meta.description) parts.push(wrap(meta.description, width, 0).join("\n"));
  const subs = await resolve(r.cmd.subCommands);
  if (subs && r.path.length > 0) {
    const rows: Array<[string, string]> = [];
    for (const [n, s] of Object.entries(subs)) {
      const m = ((await resolve(((await resolve(s)) as Cmd).meta)) ?? {}) as CommandMeta;
      rows.push([n, m.description ?? ""]);
    }
    parts.push(`Commands:\n${table(rows, width)}`);
  }
  const rows: Array<[string, string]> = [];
  for (const { name: n, def } of await flagSpecs(r.cmd)) {
    const shorts = aliases(def).filter((a) => a.length === 1);
    const on = def.type === "boolean" && def.default === true;
    const left = `${shorts.length ? `-${shorts[0]}, ` : "    "}--${on ? "[no-]" : ""}${n}${takesValue(def) ? ` <${def.valueHint ?? "value"}>` : ""}`;
    const dflt = on
      ? " (default: on)"
      : def.default !== undefined && def.default !== false
        ? ` (default: ${String(def.default)})`
        : "";
    rows.push([left, `${def.description ?? ""}${dflt}`]);
  }
  if (r.path.length === 0) {
    rows.push(["    --acp", "Same as `ccb acp` (how Zed starts agents)"]);
    rows.push(["-v, --version", "Print the version"]);
  }
  rows.push(["-h, --help", "Show this help"]);
  parts.push(`Flags:\n${table(rows, width)}`);
  const env = ENV[key];
  if (env) parts.push(`Environment:\n${table(env, width)}`);
  if (r.path.length === 0) parts.push("Run `ccb <command> --help` for the flags of each command.");
  return `${parts.join("\n\n")}\n`;
}
