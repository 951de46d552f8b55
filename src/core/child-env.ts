import { isSecretName, MODEL_KEY_NAMES, modelKeyEnv } from "./secret-vault.ts";

/**
 * The one environment policy for every process ccb starts (terminals, tool commands, git, rg, link
 * agents, the runtime, Chromium): the environment without any secret (secret-vault.ts), with ccb's
 * containment marker (supervisor.ts) so the process and all its descendants can be found again.
 * Only an agent process of ours gets its own model credentials (`agent: true`), never its tools.
 */
export interface ChildEnvOptions {
  /** Give the model credentials from the vault (the agent process `ccb link` starts). */
  agent?: boolean;
  /** Entries set on top (checked by the caller). */
  extra?: Record<string, string | undefined>;
}

/** Names never passed on, whatever the secret list says (test runner internals). */
const ALWAYS_DROPPED = new Set(["NODE_TEST_CONTEXT"]);

let scopeEntry: [string, string] | undefined;

/** Set by the supervisor: the marker every child carries (CCB_SCOPE_<id>=<pid>). */
export function setScopeMarker(name: string, value: string): void {
  scopeEntry = [name, value];
}

export function scopeMarker(): [string, string] | undefined {
  return scopeEntry;
}

export function childEnv(base: NodeJS.ProcessEnv = process.env, options: ChildEnvOptions = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined || isSecretName(k) || ALWAYS_DROPPED.has(k)) continue;
    env[k] = v;
  }
  if (options.agent) {
    for (const n of MODEL_KEY_NAMES) if (base[n]) env[n] = base[n] as string;
    Object.assign(env, modelKeyEnv());
  }
  for (const [k, v] of Object.entries(options.extra ?? {})) if (v !== undefined) env[k] = v;
  if (scopeEntry) env[scopeEntry[0]] = scopeEntry[1];
  return env;
}
