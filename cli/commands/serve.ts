import { defineCommand } from "citty";
import { CcbError } from "../../src/core/errors.ts";
import { secretValue } from "../../src/core/secret-vault.ts";
import { parseRenderMode } from "../../src/protocols/mcp/app/render-mode.ts";
import { type RuntimeArgValues, runtimeArgs, runtimeOptionsFrom } from "../../src/workbench/runtime-flags.ts";
import { repeatedFlag } from "../argv.ts";
import { commonArgs, reportFatal, secretArg, setupLogging, workspaceArg, workspaceRoots } from "../common.ts";
import { announceLine } from "../logging.ts";

export default defineCommand({
  meta: {
    name: "serve",
    description:
      "MCP server over the shared workspace: files, search, terminals, git and (with a workbench) the live editor.\n" +
      "Transports: --stdio (default when no transport is given) and/or --http (Streamable HTTP at /mcp, plus /healthz).\n" +
      "Examples:\n" +
      "  ccb serve --stdio --workspace ~/src/project\n" +
      "  ccb serve --http --port 3001 --workspace .            (prints the URL on stderr)\n" +
      "  CCB_AUTH_TOKEN=... ccb serve --http --host 0.0.0.0 --cert tls.crt --key tls.key\n" +
      "  ccb serve --http --host 0.0.0.0 --trust-proxy --public-url https://ccb.example.com --oauth-issuer https://login.example.com",
  },
  args: {
    stdio: {
      type: "boolean",
      description:
        "Serve MCP over stdin/stdout (newline-delimited JSON-RPC; stdout carries only protocol frames). Default when --http is not given.",
    },
    http: {
      type: "boolean",
      description:
        "Serve MCP over Streamable HTTP at <url>/mcp (sessions), with GET /healthz. May be combined with --stdio.",
    },
    host: {
      type: "string",
      description:
        "Address to bind for --http (default 127.0.0.1). A non-loopback address is refused unless --cert/--key AND a bearer token are set.",
      valueHint: "addr",
    },
    port: {
      type: "string",
      description: "Port for --http (default 0 = any free port). The listening URL is printed on stderr.",
      valueHint: "n",
    },
    workspace: workspaceArg,
    "auth-token": {
      type: "string",
      description:
        "Bearer token required on /mcp (prefer env CCB_AUTH_TOKEN_FILE=<file> or CCB_AUTH_TOKEN: flags are visible in ps, and get a warning). Compared in constant time; wrong or missing -> 401.",
      valueHint: "token",
    },
    cert: {
      type: "string",
      description: "TLS certificate (PEM file) for --http: serves HTTPS. Needs --key.",
      valueHint: "file",
    },
    key: { type: "string", description: "TLS private key (PEM file) for --http. Needs --cert.", valueHint: "file" },
    "allow-origin": {
      type: "string",
      description:
        "Browser Origin allowed to call /mcp (exact scheme://host[:port]); repeatable. Other browser Origins get 403; non-browser clients send none.",
      valueHint: "origin",
    },
    "max-body-bytes": {
      type: "string",
      description:
        "Largest accepted MCP message in bytes, over HTTP (/mcp body; larger -> 413) and stdio (one line; larger -> Invalid Request with the request's id). Default 4194304 = 4 MiB.",
      valueHint: "n",
    },
    "public-url": {
      type: "string",
      description:
        "The origin browsers reach this server at behind a reverse proxy or ingress (env CCB_PUBLIC_URL), e.g. https://ccb.example.com: used in the MCP App's CSP, workbench links, the stream's wss:// URL and the Host allow-list. Must be https (or loopback); a non-loopback one needs a token.",
      valueHint: "url",
    },
    "trust-proxy": {
      type: "boolean",
      description:
        "Serve plain HTTP on a non-loopback --host behind a TLS-terminating proxy (env CCB_TRUST_PROXY=1); needs an https --public-url and a bearer token.",
    },
    "oauth-issuer": {
      type: "string",
      description:
        "Make /mcp an OAuth 2.1 resource server trusting this authorization server (issuer URL; repeatable; env CCB_OAUTH_ISSUER, comma- or space-separated). Publishes /.well-known/oauth-protected-resource; accepts access tokens issued for <public URL>/mcp with scope ccb:read or ccb:write. Startup fails when the issuer cannot be reached.",
      valueHint: "url",
    },
    "oauth-audience": {
      type: "string",
      description:
        "The audience (aud) access tokens must carry (env CCB_OAUTH_AUDIENCE); default the resource URL <public URL>/mcp.",
      valueHint: "aud",
    },
    "oauth-client-id": {
      type: "string",
      description:
        "ccb's client id at the issuer, to introspect opaque access tokens (RFC 7662; env CCB_OAUTH_CLIENT_ID); the secret only from env CCB_OAUTH_CLIENT_SECRET or CCB_OAUTH_CLIENT_SECRET_FILE.",
      valueHint: "id",
    },
    "oauth-allow-static-token": {
      type: "boolean",
      description:
        "Accept the static --auth-token / CCB_AUTH_TOKEN beside OAuth on /mcp (env CCB_OAUTH_ALLOW_STATIC_TOKEN=1); without it, both together stop startup.",
    },
    workbench: {
      type: "boolean",
      default: true,
      description:
        "Run the live Code OSS workbench beside the server so editor tools work (default on; --no-workbench turns it off). Without a runtime, serve still runs and editor tools say why.",
    },
    ...runtimeArgs,
    "render-mode": {
      type: "string",
      description:
        "How the MCP App shows the workbench: default (an iframe, or an honest browser link when the host refuses frames) or stream (experimental: pixels of a server-side Chromium over /stream). Env CCB_RENDER_MODE; any other value stops startup.",
      valueHint: "default|stream",
    },
    tools: {
      type: "string",
      description:
        "Which tools to offer: all (default), or editor: the editor's own powers without the files, search, terminal and git tools an agent like claude already has (what `ccb ide -- claude` registers).",
      valueHint: "all|editor",
    },
    ...commonArgs,
  },
  async run({ args, rawArgs }) {
    try {
      const { log } = setupLogging(args);
      const { roots, source } = workspaceRoots(rawArgs);
      // A bad runtime flag or render mode stops startup even with --no-workbench: a typo must not go unnoticed.
      const workbench = workbenchArgs(args);
      const wantHttp = Boolean(args.http);
      const authToken = secretArg(args["auth-token"], "--auth-token", "CCB_AUTH_TOKEN");
      const maxBodyBytes = intArg(
        "--max-body-bytes",
        args["max-body-bytes"],
        4 * 1024 * 1024,
        1024,
        1024 * 1024 * 1024,
      );
      const { TOOL_PROFILES } = await import("../../src/tools/catalog.ts");
      const profile = args.tools ?? "all";
      if (!Object.hasOwn(TOOL_PROFILES, profile))
        throw new CcbError("INVALID_ARGUMENT", `--tools must be all or editor, got "${profile}".`);
      const { runServe } = await import("../../src/protocols/mcp/index.ts");
      await runServe({
        roots,
        rootsSource: source,
        stdio: Boolean(args.stdio) || !wantHttp,
        http: wantHttp
          ? {
              host: args.host ?? "127.0.0.1",
              port: intArg("--port", args.port, 0, 0, 65535),
              authToken,
              certFile: args.cert,
              keyFile: args.key,
              allowOrigins: repeatedFlag(rawArgs, "allow-origin", "--allow-origin needs a value."),
              maxBodyBytes,
              publicUrl: args["public-url"] || process.env.CCB_PUBLIC_URL || undefined,
              trustProxy: Boolean(args["trust-proxy"]) || /^(1|true|yes)$/i.test(process.env.CCB_TRUST_PROXY ?? ""),
              oauth: oauthArgs(args, rawArgs),
            }
          : undefined,
        maxFrameBytes: maxBodyBytes,
        tools: TOOL_PROFILES[profile as keyof typeof TOOL_PROFILES],
        log,
        announce: (line) => announceLine(line),
        workbench: args.workbench === false ? undefined : workbench,
      });
      process.exit(0);
    } catch (err) {
      reportFatal(err);
    }
  },
});

function workbenchArgs(args: RuntimeArgValues & { "render-mode"?: string }) {
  return {
    ...runtimeOptionsFrom(args),
    renderMode: parseRenderMode(args["render-mode"] ?? process.env.CCB_RENDER_MODE),
  } as const;
}

/** The --oauth-* flags (and their environment), or undefined when no issuer is given. */
function oauthArgs(
  args: { "oauth-audience"?: string; "oauth-client-id"?: string; "oauth-allow-static-token"?: boolean },
  rawArgs: readonly string[],
) {
  const fromFlags = repeatedFlag(rawArgs, "oauth-issuer", "--oauth-issuer needs a URL.");
  const issuers = fromFlags.length > 0 ? fromFlags : (process.env.CCB_OAUTH_ISSUER ?? "").split(/[\s,]+/);
  const list = issuers.map((i) => i.trim()).filter(Boolean);
  if (list.length === 0) return undefined;
  const cooldown = process.env.CCB_OAUTH_JWKS_COOLDOWN_MS;
  return {
    issuers: list,
    audience: args["oauth-audience"] || process.env.CCB_OAUTH_AUDIENCE || undefined,
    clientId: args["oauth-client-id"] || process.env.CCB_OAUTH_CLIENT_ID || undefined,
    clientSecret: secretValue("CCB_OAUTH_CLIENT_SECRET"),
    allowStaticToken:
      Boolean(args["oauth-allow-static-token"]) ||
      /^(1|true|yes)$/i.test(process.env.CCB_OAUTH_ALLOW_STATIC_TOKEN ?? ""),
    jwksCooldownMs: intArg("CCB_OAUTH_JWKS_COOLDOWN_MS", cooldown, 30_000, 0, 86_400_000),
  };
}

function intArg(flag: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new CcbError("INVALID_ARGUMENT", `${flag} must be an integer from ${min} to ${max}, got "${value}".`);
  }
  return n;
}
