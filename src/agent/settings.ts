import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { CcbError } from "../core/errors.ts";
import { CredentialStore } from "../core/model-key-store.ts";
import { secretValue } from "../core/secret-vault.ts";
import type { Price } from "./pricing.ts";

/**
 * Configuration of `ccb acp`, lowest to highest precedence:
 *   1. user settings     $XDG_CONFIG_HOME/ccb/settings.json (default ~/.config/ccb/settings.json)
 *   2. project settings  <cwd>/.ccb/settings.json
 *   3. the environment   ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN / ANTHROPIC_BASE_URL / ANTHROPIC_MODEL, ...
 * A settings file's "env" object supplies environment values that the real environment lacks.
 * Without ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN from any of them, the key a person signed in
 * with (`ccb acp --login`, ccb's secret store under the config folder) is used.
 */
export const SettingsSchema = z.object({
  env: z.record(z.string(), z.string()).optional(),
  model: z.string().optional(),
  models: z.array(z.string()).optional(),
  permissionMode: z.string().optional(),
  thinking: z.enum(["off", "low", "medium", "high"]).optional(),
  maxTurns: z.number().int().positive().optional(),
  maxTokens: z.number().int().positive().optional(),
  /** US dollars per million tokens, by model id, for models whose prices ccb does not know. */
  prices: z
    .record(
      z.string(),
      z.object({
        input: z.number().nonnegative(),
        output: z.number().nonnegative(),
        cacheWrite: z.number().nonnegative().optional(),
        cacheRead: z.number().nonnegative().optional(),
      }),
    )
    .optional(),
});
export type SettingsFile = z.infer<typeof SettingsSchema>;

export interface AgentEnv {
  home: string | undefined;
  dataDir: string;
  configDir: string | undefined;
}

export interface ModelSettings {
  apiKey: string | undefined;
  authToken: string | undefined;
  /** Where the credential came from: the environment or a settings file, or ccb's secret store (sign-in). */
  credentialSource?: "environment" | "signed-in" | undefined;
  baseURL: string | undefined;
  model: string;
  models: string[];
  thinking: "off" | "low" | "medium" | "high";
  maxTurns: number;
  maxTokens: number;
  permissionMode: string | undefined;
  prices: Record<string, Price>;
  maxRetries: number;
  retryBaseMs: number;
  timeoutMs: number;
}

export const DEFAULT_MODELS = ["claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5"];

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === "" ? undefined : v;
}

/**
 * Where the agent keeps its data. Editors sometimes start agents with an empty HOME or PATH;
 * that is reported as a clear error (the caller prints it and exits) instead of guessing.
 */
export function resolveAgentEnv(env: NodeJS.ProcessEnv = process.env): AgentEnv {
  if (!nonEmpty(env.PATH)) {
    throw new CcbError("CONFIG_INVALID", "PATH is empty: ccb acp needs PATH to run git, shells and MCP servers.", {
      hint: 'Give the agent a PATH, e.g. in Zed: "agent_servers": { "ccb": { "command": "ccb", "args": ["--acp"], "env": { "PATH": "/usr/local/bin:/usr/bin:/bin" } } }.',
    });
  }
  const home = nonEmpty(env.HOME) ?? nonEmpty(env.USERPROFILE);
  const override = nonEmpty(env.CCB_DATA_DIR);
  const xdgData = nonEmpty(env.XDG_DATA_HOME);
  const dataDir =
    override ?? (xdgData ? join(xdgData, "ccb") : home ? join(home, ".local", "share", "ccb") : undefined);
  if (!dataDir) {
    throw new CcbError("CONFIG_INVALID", "HOME is not set: ccb acp cannot find where to store sessions.", {
      hint: "Set HOME (or CCB_DATA_DIR / XDG_DATA_HOME) in the environment the editor gives the agent.",
    });
  }
  const xdgConfig = nonEmpty(env.XDG_CONFIG_HOME);
  const configDir = xdgConfig ? join(xdgConfig, "ccb") : home ? join(home, ".config", "ccb") : undefined;
  return { home: home ?? (homedir() || undefined), dataDir, configDir };
}

export function readSettingsFile(path: string): SettingsFile {
  if (!existsSync(path)) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new CcbError("CONFIG_INVALID", `Settings file is not valid JSON: ${path}`, {
      cause: err,
      hint: "Fix or remove the file.",
    });
  }
  const parsed = SettingsSchema.safeParse(raw);
  if (!parsed.success) {
    throw new CcbError(
      "CONFIG_INVALID",
      `Settings file ${path} is invalid: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  }
  return parsed.data;
}

export function settingsPaths(agentEnv: AgentEnv, cwd: string): { user: string | undefined; project: string } {
  return {
    user: agentEnv.configDir ? join(agentEnv.configDir, "settings.json") : undefined,
    project: join(cwd, ".ccb", "settings.json"),
  };
}

/** Merge user < project < environment into the settings one session uses. */
export function loadModelSettings(
  agentEnv: AgentEnv,
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): ModelSettings {
  const paths = settingsPaths(agentEnv, cwd);
  const user = paths.user ? readSettingsFile(paths.user) : {};
  const project = readSettingsFile(paths.project);
  const fileEnv = { ...user.env, ...project.env };
  // Secrets (ANTHROPIC_API_KEY...) were moved from process.env into the vault at startup.
  const get = (k: string) =>
    nonEmpty(env[k]) ?? (env === process.env ? nonEmpty(secretValue(k)) : undefined) ?? nonEmpty(fileEnv[k]);
  const model = get("ANTHROPIC_MODEL") ?? project.model ?? user.model ?? DEFAULT_MODELS[0]!;
  const list = project.models ?? user.models ?? DEFAULT_MODELS;
  const models = list.includes(model) ? list : [model, ...list];
  const int = (k: string, d: number) => {
    const v = get(k);
    const n = v === undefined ? NaN : Number(v);
    return Number.isFinite(n) && n >= 0 ? n : d;
  };
  const configured = { apiKey: get("ANTHROPIC_API_KEY"), authToken: get("ANTHROPIC_AUTH_TOKEN") };
  const stored =
    configured.apiKey || configured.authToken || !agentEnv.configDir
      ? undefined
      : new CredentialStore(agentEnv.configDir).read();
  return {
    apiKey: configured.apiKey ?? stored,
    authToken: configured.authToken,
    credentialSource: configured.apiKey || configured.authToken ? "environment" : stored ? "signed-in" : undefined,
    baseURL: get("ANTHROPIC_BASE_URL"),
    model,
    models,
    thinking: project.thinking ?? user.thinking ?? "off",
    maxTurns: int("CCB_MAX_TURNS", project.maxTurns ?? user.maxTurns ?? 50),
    maxTokens: project.maxTokens ?? user.maxTokens ?? 16_384,
    prices: { ...user.prices, ...project.prices } as Record<string, Price>,
    permissionMode:
      get("CCB_PERMISSION_MODE") ?? get("ACP_PERMISSION_MODE") ?? project.permissionMode ?? user.permissionMode,
    maxRetries: int("CCB_MAX_RETRIES", 4),
    retryBaseMs: int("CCB_RETRY_BASE_MS", 500),
    timeoutMs: int("CCB_API_TIMEOUT_MS", 600_000),
  };
}
