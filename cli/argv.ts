import { parseArgs } from "node:util";
import type { ArgDef, CommandDef, CommandMeta, Resolvable } from "citty";
import { CcbError } from "../src/core/errors.ts";

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

/**
 * The tokens of ccb's own arguments as node's parser reads them (`--x v`, `--x=v`, `-x v`, `--no-x`):
 * `strings` take a value, every other option is a switch; nothing is refused here.
 */
function tokensOf(args: readonly string[], strings: Record<string, string | undefined>) {
  const options = Object.fromEntries(
    Object.entries(strings).map(([name, short]) => [name, { type: "string" as const, ...(short ? { short } : {}) }]),
  );
  return parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true }).tokens;
}

/** Refuse flags the command does not define, and stray words where it takes none. */
export async function checkFlags(r: Resolved, isRoot: boolean): Promise<void> {
  const specs = await flagSpecs(r.cmd);
  const where = ["ccb", ...r.path].join(" ");
  const known = new Map<string, ArgDef>([["help", { type: "boolean" }]]);
  const shortOf: Record<string, string> = { h: "help" };
  if (isRoot) {
    known.set("version", { type: "boolean" });
    shortOf.v = "version";
  }
  for (const s of specs) {
    known.set(s.name, s.def);
    for (const a of aliases(s.def)) {
      if (a.length === 1) shortOf[a] = s.name;
      else known.set(a, s.def);
    }
    if (s.def.type === "boolean" && !s.name.startsWith("no-")) known.set(`no-${s.name}`, s.def);
  }
  const strings: Record<string, string | undefined> = {};
  for (const [name, def] of known) if (takesValue(def)) strings[name] = undefined;
  for (const [short, name] of Object.entries(shortOf)) if (name in strings) strings[name] = short;
  const positional = specs.length !== Object.keys(((await resolve(r.cmd.args)) ?? {}) as object).length;
  for (const t of tokensOf(r.own, strings)) {
    if (t.kind === "positional") {
      if (!positional)
        throw new UsageError(`${where}: unexpected argument "${t.value}". Run \`${where} --help\` for usage.`);
      continue;
    }
    if (t.kind !== "option") continue;
    // a short flag of a string option arrives under its long name; other short flags as themselves
    const name = t.rawName.startsWith("--") || t.name in strings ? t.name : shortOf[t.name];
    const def = name === undefined ? undefined : known.get(name);
    if (!def)
      throw new UsageError(
        t.rawName.startsWith("--")
          ? `${where}: unknown flag --${t.name}.${suggest(t.name, [...known.keys()], "--")} Run \`${where} --help\` for its flags.`
          : `${where}: unknown flag ${t.rawName}. Run \`${where} --help\` for its flags.`,
      );
    if (takesValue(def) && t.value === undefined)
      throw new UsageError(
        t.rawName.startsWith("--")
          ? `${where}: --${name} needs a value${def.valueHint ? ` (<${def.valueHint}>)` : ""}.`
          : `${where}: ${t.rawName} needs a value.`,
      );
  }
}

/**
 * Every value of a repeatable flag before `--` (citty keeps only the last one): `--flag v`,
 * `--flag=v`, and `-s v` for its short name. A value that looks like a flag is refused with `needs`.
 */
export function repeatedFlag(rawArgs: readonly string[], name: string, needs: string, short?: string): string[] {
  const dash = rawArgs.indexOf("--");
  const own = dash === -1 ? rawArgs : rawArgs.slice(0, dash);
  const out: string[] = [];
  for (const t of tokensOf(own, { [name]: short })) {
    if (t.kind !== "option" || t.name !== name) continue;
    if (t.value === undefined || (!t.inlineValue && t.value.startsWith("-")))
      throw new CcbError("INVALID_ARGUMENT", needs);
    out.push(t.value);
  }
  return out;
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
