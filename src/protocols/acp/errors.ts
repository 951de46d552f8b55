import { RequestError } from "@agentclientprotocol/sdk/unstable";
import { ModelError, type ModelErrorKind } from "../../agent/model-error.ts";
import { isCcbError } from "../../core/errors.ts";
import { JsonRpcCode } from "../../util/jsonrpc.ts";

const MODEL_ERROR_CODES: Record<ModelErrorKind, string> = {
  auth: "AUTH_REQUIRED",
  unavailable: "MODEL_UNAVAILABLE",
  rejected: "MODEL_REJECTED",
};

/**
 * The agent's typed failures -> JSON-RPC errors, in one place for both ACP versions.
 * AUTH_REQUIRED names the auth methods offered to this client.
 */
export function toRequestError(err: unknown, sessionId: string | undefined, authMethodIds: string[]): Error {
  if (err instanceof RequestError) return err;
  if (err instanceof ModelError) {
    const data = { code: MODEL_ERROR_CODES[err.kind], ...(err.status !== undefined ? { status: err.status } : {}) };
    if (err.kind === "auth") return RequestError.authRequired({ ...data, authMethods: authMethodIds }, err.message);
    return RequestError.internalError(data, err.message);
  }
  if (isCcbError(err)) {
    switch (err.code) {
      case "NOT_FOUND":
        return sessionId ? RequestError.sessionNotFound(sessionId) : RequestError.resourceNotFound();
      case "INVALID_ARGUMENT":
      case "INVALID_PATH":
      case "PATH_TOO_LONG":
      case "PATH_OUTSIDE_WORKSPACE":
      case "NOT_DIRECTORY":
        return RequestError.invalidParams({ code: err.code }, err.message);
      case "PERMISSION_DENIED":
        return new RequestError(JsonRpcCode.InternalError, err.message, { code: err.code });
      default:
        return RequestError.internalError({ code: err.code }, err.message);
    }
  }
  return RequestError.internalError(undefined, (err as Error)?.message ?? String(err));
}

/** Run a handler; a failure becomes the JSON-RPC error of `toRequestError` (unexpected ones are logged with their stack). */
export async function answer<T>(
  log: { error(m: string): void },
  fn: () => Promise<T> | T,
  sessionId: string | undefined,
  authMethodIds: () => string[],
): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    // expected failures (typed, with a message for the user) are not logged as crashes
    if (!isCcbError(err) && !(err instanceof ModelError) && !(err instanceof RequestError))
      log.error(`request failed: ${(err as Error)?.stack ?? String(err)}`);
    throw toRequestError(err, sessionId, authMethodIds());
  }
}
