import { readFileSync } from "node:fs";

/**
 * ccb's secret intake. The CLI calls `takeSecrets()` first thing: every secret variable (and its
 * `<NAME>_FILE` form) is read into this vault and deleted from `process.env`, so no child started
 * with the default environment inherits it. This module imports nothing: every layer may use it.
 *
 * Limit (Linux): the kernel keeps a process's initial environment in /proc/<pid>/environ, and
 * deleting from process.env does not change it; a process of the same user (a terminal child) can
 * read it there. A value given as a file (`CCB_AUTH_TOKEN_FILE=...`) keeps it out of that page.
 */

/** Secrets by exact name: ccb's bearer tokens, ACP link/RCS tokens, the model's credentials. */
export const SECRET_NAMES: readonly string[] = [
  "CCB_AUTH_TOKEN",
  "CCB_BRIDGE_TOKEN",
  "ACP_AUTH_TOKEN",
  "ACP_RCS_TOKEN",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "CLAUDE_CODE_OAUTH_TOKEN",
];

/** The model credentials: the only secrets an agent process of ours may receive (its own key). */
export const MODEL_KEY_NAMES: readonly string[] = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "CLAUDE_CODE_OAUTH_TOKEN",
];

const SECRET_PATTERN = /^(CCB|ACP|FLUJO)_.*(TOKEN|SECRET|PASSWORD|KEY)$/i;

export function isSecretName(name: string): boolean {
  return (
    SECRET_NAMES.includes(name) ||
    SECRET_PATTERN.test(name) ||
    (name.endsWith("_FILE") && isSecretName(name.slice(0, -5)))
  );
}

const vault = new Map<string, string>();
/** Every secret value ccb knows (from the vault and registered at run time), for masking. */
const values = new Set<string>();

/** Values shorter than this are not masked (too many false hits; no real token is this short). */
const MIN_MASKED = 8;

export function registerSecret(value: string | undefined): void {
  if (value && value.length >= MIN_MASKED) values.add(value);
}

/**
 * Move every secret out of `env` (default process.env) into the vault; `<NAME>_FILE` is read
 * (first line, trimmed) when `<NAME>` itself is not set. Idempotent; returns the names taken.
 */
export function takeSecrets(env: NodeJS.ProcessEnv = process.env): string[] {
  const taken: string[] = [];
  for (const name of Object.keys(env)) {
    if (!isSecretName(name)) continue;
    const v = env[name];
    delete env[name];
    if (v === undefined) continue;
    taken.push(name);
    if (name.endsWith("_FILE")) {
      const base = name.slice(0, -5);
      if (vault.has(base) || env[base] !== undefined) continue;
      let content: string;
      try {
        content = readFileSync(v, "utf8").split(/\r?\n/)[0]?.trim() ?? "";
      } catch (err) {
        throw new Error(`${name}: cannot read ${v}: ${(err as Error).message}`);
      }
      if (content) {
        vault.set(base, content);
        registerSecret(content);
      }
      continue;
    }
    if (v === "") continue;
    vault.set(name, v);
    registerSecret(v);
  }
  return taken;
}

/** A secret by name: `env[name]` when the caller passes an environment that has it, else the vault. */
export function secretValue(name: string, env?: NodeJS.ProcessEnv): string | undefined {
  const v = env?.[name];
  if (v !== undefined && v !== "") return v;
  return vault.get(name);
}

/**
 * `base` with the vault's entries for `names` put back: for a front end that reads its
 * configuration from an environment object. Never pass the result to a child.
 */
export function withSecrets(names: readonly string[], base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...base };
  for (const n of names) {
    const v = vault.get(n);
    if (v !== undefined && out[n] === undefined) out[n] = v;
  }
  return out;
}

/** The vault's model credentials, as environment entries (for an agent process of ours). */
export function modelKeyEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of MODEL_KEY_NAMES) {
    const v = vault.get(n);
    if (v !== undefined) out[n] = v;
  }
  return out;
}

export const MASK = "[secret removed by ccb]";

/**
 * The last line of defence for model-visible output: every current secret value in `text`
 * replaced by MASK. One function, applied where tool results leave the kernel (MCP, IDE, ACP).
 */
export function maskSecrets(text: string): string {
  if (values.size === 0 || text.length < MIN_MASKED) return text;
  let out = text;
  for (const v of values) if (out.includes(v)) out = out.split(v).join(MASK);
  return out;
}

/** maskSecrets over every string inside a JSON-like value (a tool result). */
export function maskDeep<T>(value: T): T {
  if (values.size === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return maskSecrets(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) return v;
      const o: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) o[k] = walk(x);
      return o;
    }
    return v;
  };
  return walk(value) as T;
}

/** Test hook: forget everything. */
export function resetSecretsForTests(): void {
  vault.clear();
  values.clear();
}
