import Anthropic, { APIConnectionError, APIError } from "@anthropic-ai/sdk";
import { CcbError } from "../core/errors.ts";
import { CredentialStore } from "../core/model-key-store.ts";
import { registerSecret } from "../core/secret-vault.ts";
import { type AgentEnv, loadModelSettings } from "./settings.ts";

/**
 * `ccb acp --login` / `--logout`: the program an ACP client runs in a terminal for the "terminal"
 * auth method. Sign-in asks for an Anthropic API key with the input hidden, checks it with one
 * cheap request (`GET /v1/models?limit=1`, at ANTHROPIC_BASE_URL when set), and stores it in ccb's
 * secret store. The key never appears on a command line, in an environment or in a log.
 */

export const KEYS_URL = "https://console.anthropic.com/settings/keys";
const DEFAULT_BASE = "https://api.anthropic.com";
const ATTEMPTS_ON_TTY = 3;
const CHECK_TIMEOUT_MS = 30_000;

export type KeyCheck =
  | { ok: true }
  | { ok: false; kind: "refused" | "unreachable" | "failed"; message: string; status?: number | undefined };

/** One cheap authenticated request: list one model. */
export async function checkApiKey(key: string, baseURL: string | undefined, signal?: AbortSignal): Promise<KeyCheck> {
  const where = baseURL ?? DEFAULT_BASE;
  const client = new Anthropic({
    apiKey: key,
    authToken: null,
    ...(baseURL ? { baseURL } : {}),
    maxRetries: 0,
    timeout: CHECK_TIMEOUT_MS,
  });
  try {
    await client.models.list({ limit: 1 }, signal ? { signal } : {});
    return { ok: true };
  } catch (err) {
    if (err instanceof APIConnectionError) {
      const cause = (err.cause as Error | undefined)?.message ?? err.message;
      return {
        ok: false,
        kind: "unreachable",
        message: `Could not reach the Anthropic API at ${where} (${cause}). Check your network connection, your proxy, or ANTHROPIC_BASE_URL.`,
      };
    }
    if (err instanceof APIError) {
      const detail = apiMessage(err);
      if (err.status === 401)
        return {
          ok: false,
          kind: "refused",
          status: 401,
          message: `The Anthropic API at ${where} refused this key (401${detail ? `: ${detail}` : ""}). Check that you pasted the whole key; keys are at ${KEYS_URL}.`,
        };
      if (err.status === 403)
        return {
          ok: false,
          kind: "refused",
          status: 403,
          message: `The Anthropic API at ${where} accepted the key but denied access (403${detail ? `: ${detail}` : ""}). Check the key's workspace and permissions.`,
        };
      return {
        ok: false,
        kind: "failed",
        status: err.status,
        message: `The Anthropic API at ${where} answered ${err.status ?? "an error"}${detail ? ` (${detail})` : ""}; the key could not be checked. Try again in a moment.`,
      };
    }
    return { ok: false, kind: "failed", message: `Checking the key failed: ${(err as Error).message}` };
  }
}

function apiMessage(err: APIError): string | undefined {
  const body = err.error as { error?: { message?: unknown } } | undefined;
  const m = body?.error?.message;
  return typeof m === "string" ? m.slice(0, 200) : undefined;
}

export interface LoginIO {
  input: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  /** Where the prompts and messages go (a terminal). */
  output: NodeJS.WritableStream;
}

/**
 * Read one line without echo. On a TTY the terminal is put in raw mode (Ctrl-C aborts, backspace
 * edits, pasting works); from a pipe the first line is read. Undefined on end of input or Ctrl-C.
 */
export function readHidden(io: LoginIO, prompt: string): Promise<string | undefined> {
  const { input, output } = io;
  output.write(prompt);
  return new Promise((resolve) => {
    let value = "";
    const tty = input.isTTY === true && typeof input.setRawMode === "function";
    const finish = (v: string | undefined) => {
      input.removeListener("data", onData);
      input.removeListener("end", onEnd);
      if (tty) input.setRawMode?.(false);
      input.pause();
      output.write("\n");
      resolve(v);
    };
    const onEnd = () => finish(value.length > 0 && !tty ? value : undefined);
    const onData = (chunk: Buffer | string) => {
      const s = typeof chunk === "string" ? chunk : chunk.toString("utf8");
      for (const ch of s) {
        if (ch === "\r" || ch === "\n") return finish(value);
        if (tty && ch === "\u0003") return finish(undefined); // Ctrl-C
        if (tty && ch === "\u0004" && value === "") return finish(undefined); // Ctrl-D
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else if (ch >= " ") value += ch;
      }
    };
    if (tty) input.setRawMode?.(true);
    input.on("data", onData);
    input.on("end", onEnd);
    input.resume();
  });
}

/** The sign-in dialogue; resolves with the exit code (0: a checked key is stored). */
export async function runLogin(
  env: AgentEnv,
  io: LoginIO,
  processEnv: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const say = (line: string) => io.output.write(`${line}\n`);
  if (!env.configDir)
    throw new CcbError("CONFIG_INVALID", "HOME is not set: ccb cannot find its config folder to store the key.", {
      hint: "Set HOME (or XDG_CONFIG_HOME) and sign in again.",
    });
  const store = new CredentialStore(env.configDir);
  const settings = loadModelSettings(env, process.cwd(), processEnv);
  say("Sign in to ccb with an Anthropic API key.");
  say(`Create one at ${KEYS_URL}, then paste it below (the input is hidden).`);
  if (settings.credentialSource === "environment")
    say(
      "Note: ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN is set (environment or a settings file); it is used before the key stored here.",
    );
  const attempts = io.input.isTTY ? ATTEMPTS_ON_TTY : 1;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const entered = (await readHidden(io, "Anthropic API key: "))?.trim();
    if (entered === undefined) {
      say("Sign-in cancelled; nothing was stored.");
      return 1;
    }
    if (entered === "") {
      say("No key entered.");
      continue;
    }
    registerSecret(entered);
    say(`Checking the key with ${settings.baseURL ?? DEFAULT_BASE} ...`);
    const r = await checkApiKey(entered, settings.baseURL);
    if (r.ok) {
      store.write(entered);
      say(`Signed in. The key is stored in ${store.path} (readable only by you).`);
      say("Run `ccb acp --logout` (or log out from your editor) to remove it.");
      return 0;
    }
    say(r.message);
    if (r.kind !== "refused") break;
  }
  say("Nothing was stored.");
  return 1;
}

/** `ccb acp --logout`: remove the stored key; the exit code. */
export function runLogout(env: AgentEnv, io: Pick<LoginIO, "output">): number {
  if (!env.configDir) {
    io.output.write("No config folder (HOME is not set): nothing is stored.\n");
    return 0;
  }
  const store = new CredentialStore(env.configDir);
  io.output.write(store.remove() ? `Signed out: removed ${store.path}.\n` : "No stored key: nothing to remove.\n");
  return 0;
}
