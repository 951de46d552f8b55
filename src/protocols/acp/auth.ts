import { selfCommand } from "../../util/self.ts";

/** Sign-in in a terminal the client opens: it runs this agent's own program with these args (`ccb acp --login`). */
export const LOGIN_METHOD_ID = "ccb-login";
/** The key in the agent's environment or settings (v1: the "env_var" shape; v2: an `agent` method that checks it). */
export const ENV_METHOD_ID = "anthropic-api-key";

export const LOGIN_ARGS = ["--login"];

export const LOGIN_TEXT = {
  name: "Sign in with an Anthropic API key",
  description:
    "Opens a terminal that asks for your Anthropic API key (input hidden), checks it with the API and stores it for ccb, readable only by you. ANTHROPIC_API_KEY in the environment still wins.",
};

export const ENV_TEXT = {
  name: "Anthropic API key",
  description:
    'Set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL for another endpoint) in the agent\'s environment, or in the "env" object of ~/.config/ccb/settings.json, then restart the agent.',
};

/** The older `_meta["terminal-auth"]` command (the registry's checker still asks this way). */
export function legacyTerminalAuthMeta(): Record<string, unknown> {
  return { "terminal-auth": { ...selfCommand(["acp", "--login"]), label: "ccb sign-in" } };
}
