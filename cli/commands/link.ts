import { defineCommand } from "citty";
import { withSecrets } from "../../src/core/secret-vault.ts";
import { startLink } from "../../src/link/index.ts";
import { repeatedFlag } from "../argv.ts";
import { closeOnSignals, commonArgs, reportFatal, setupLogging } from "../common.ts";

export default defineCommand({
  meta: {
    name: "link",
    description:
      "Expose a stdio ACP agent on ACP's remote transport: /acp speaks Streamable HTTP and WebSocket\n" +
      "(/ws: the plain WebSocket relay). Each connection gets its own agent process, started by its first\n" +
      "message. Without `-- <agent command>` the agent is `ccb acp`.\n" +
      "Auth: `Authorization: Bearer <token>` or the `rcs.auth.<base64url(token)>` subprotocol; the token is\n" +
      "ACP_AUTH_TOKEN or generated, shown once and saved 0600. With ACP_RCS_URL + ACP_RCS_TOKEN it also\n" +
      "registers with a remote control server.",
  },
  args: {
    port: { type: "string", description: "Port to listen on (0 = any free port)", default: "9315" },
    host: { type: "string", description: "Host to bind (loopback by default)", default: "localhost" },
    https: {
      type: "boolean",
      description: "Serve wss:// with a cached self-signed certificate (localhost, 127.0.0.1, ::1, host name)",
    },
    cert: {
      type: "string",
      description: "TLS certificate file (PEM); with --key, instead of the self-signed one",
      valueHint: "file",
    },
    key: { type: "string", description: "TLS private key file (PEM)", valueHint: "file" },
    "no-auth": { type: "boolean", description: "Accept connections without a token (loopback hosts only)" },
    "allow-origin": {
      type: "string",
      description: "Allow browser clients from this Origin (repeatable)",
      valueHint: "origin",
    },
    "max-message-size": {
      type: "string",
      description: "Largest message in bytes, either way (default 32 MiB); larger frames close with 1009",
      valueHint: "bytes",
    },
    debug: { type: "boolean", description: "Log every frame (tokens redacted) to a file under the state folder" },
    "permission-mode": {
      type: "string",
      description:
        "Local default permission mode: default, acceptEdits, plan, dontAsk, bypassPermissions, auto (else ~/.config/ccb/link.json, else ACP_PERMISSION_MODE)",
      valueHint: "mode",
    },
    ...commonArgs,
  },
  async run({ args, rawArgs }) {
    const { log } = setupLogging(args);
    const dash = rawArgs.indexOf("--");
    const agentArgv = dash === -1 ? [] : rawArgs.slice(dash + 1);
    const allowOrigins = repeatedFlag(rawArgs, "allow-origin", "--allow-origin needs a value.");
    // citty turns --no-auth into auth=false
    const noAuth = args["no-auth"] === true || (args as Record<string, unknown>).auth === false;
    const port = Number(args.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      reportFatal(new Error(`--port must be 0-65535, not ${args.port}`));
    try {
      const handle = await startLink({
        host: args.host,
        port,
        https: args.https === true,
        cert: args.cert,
        key: args.key,
        noAuth,
        debug: args.debug === true,
        permissionMode: args["permission-mode"],
        allowOrigins,
        agentArgv,
        // The link's own tokens were moved out of process.env at startup (src/core/secret-vault.ts).
        env: withSecrets(["ACP_AUTH_TOKEN", "ACP_RCS_TOKEN"]),
        ...(args["max-message-size"] ? { maxMessageBytes: Number(args["max-message-size"]) } : {}),
        log: log.child("link"),
        announce: (line) => process.stderr.write(`ccb link: ${line}\n`),
      });
      closeOnSignals(handle, handle.rcs?.done);
    } catch (err) {
      reportFatal(err);
    }
  },
});
