/**
 * Why a model request failed: the credentials are missing or refused (`auth`), the API could not
 * be reached or kept failing after retries (`unavailable`), or it rejected the request (`rejected`).
 */
export type ModelErrorKind = "auth" | "unavailable" | "rejected";

/** A model failure with a message meant for the user (shown in the editor, not a stack trace). */
export class ModelError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly kind: ModelErrorKind = retryable ? "unavailable" : "rejected",
    readonly status?: number,
  ) {
    super(message);
    this.name = "ModelError";
  }
}

/** The ModelError for a session without credentials. */
export function missingCredentials(): ModelError {
  return new ModelError(
    "No Anthropic API key is configured. Sign in (your editor's sign-in for ccb, or `ccb acp --login` in a terminal), " +
      "or set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in the environment the editor gives ccb " +
      '(Zed: "agent_servers": { "ccb": { "env": { "ANTHROPIC_API_KEY": "..." } } }), or put it in the "env" object of ~/.config/ccb/settings.json.',
    false,
    "auth",
  );
}
