import { readFile } from "node:fs/promises";
import { CcbError } from "../core/errors.ts";
import type { Gateway } from "./gateway.ts";
import { isLoopbackHost } from "./loopback.ts";

/**
 * The exposure policy of every listener of ccb: who may bind where, with what. Front ends pass their
 * flags; the rules and the words of a refusal live here once.
 * - serve (MCP over HTTP): a non-loopback address needs TLS and a credential (a bearer token or
 *   OAuth), or, behind a TLS-terminating proxy (--trust-proxy), an https --public-url and one;
 * - link: a non-loopback address needs its token (--no-auth is for loopback only);
 * - stream, ide, the workbench gateway: loopback only.
 */
export type Listener = "serve" | "link" | "stream" | "ide" | "workbench";

export interface Exposure {
  listener: Listener;
  /** The bind address. */
  host: string;
  /** TLS on the listener itself. */
  tls?: boolean;
  /** A credential is required to connect (serve's bearer token, link's token). */
  token?: boolean;
  /** serve: the checked --public-url (checkPublicUrl). */
  publicUrl?: URL | undefined;
  /** serve: --trust-proxy. */
  trustProxy?: boolean | undefined;
}

const LOOPBACK_ONLY: Partial<Record<Listener, string>> = {
  stream: "ccb stream",
  ide: "ccb ide",
  workbench: "The workbench gateway",
};

/** Throws CONFIG_INVALID / INVALID_ARGUMENT when `e` would expose the listener beyond its rule. */
export function checkExposure(e: Exposure): void {
  if (isLoopbackHost(e.host)) return;
  const only = LOOPBACK_ONLY[e.listener];
  if (only) {
    throw new CcbError("INVALID_ARGUMENT", `${only} binds loopback only, not ${e.host}.`, {
      hint: "Put a TLS-terminating reverse proxy in front of it to reach it from elsewhere.",
    });
  }
  if (e.listener === "link") {
    if (e.token) return;
    throw new CcbError("INVALID_ARGUMENT", `--no-auth is only allowed on a loopback host, not ${e.host}.`, {
      hint: "Drop --no-auth (a token is generated for you), or bind --host 127.0.0.1.",
    });
  }
  if (e.tls && e.token) return;
  if (e.trustProxy) {
    if (e.publicUrl?.protocol === "https:" && e.token) return;
    throw new CcbError(
      "CONFIG_INVALID",
      `Refusing to listen on ${e.host} behind a proxy: --trust-proxy needs an https --public-url and a bearer token (--auth-token or CCB_AUTH_TOKEN) or OAuth (--oauth-issuer).`,
      { hint: "The proxy terminates TLS for the public URL; ccb then serves plain HTTP to it only." },
    );
  }
  const missing = [
    !e.tls ? "TLS (--cert and --key)" : "",
    !e.token ? "a bearer token (--auth-token or CCB_AUTH_TOKEN) or OAuth (--oauth-issuer)" : "",
  ]
    .filter(Boolean)
    .join(" and ");
  throw new CcbError("CONFIG_INVALID", `Refusing to listen on ${e.host}: a non-loopback address needs ${missing}.`, {
    hint: "Anyone who can reach this address could read and change the workspace and run commands. Use --host 127.0.0.1, or set both TLS and a token.",
  });
}

/**
 * --public-url: an origin (no path) that browsers use to reach this server. It must be https:,
 * or point at loopback; a non-loopback one needs the bearer token too.
 */
export function checkPublicUrl(value: string, token: boolean): URL {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new CcbError("CONFIG_INVALID", `--public-url ${JSON.stringify(value)} is not a URL.`, {
      hint: "Give the origin browsers use, e.g. https://ccb.example.com",
    });
  }
  const notOrigin = (u.pathname !== "/" && u.pathname !== "") || u.search || u.hash || u.username || u.password;
  if ((u.protocol !== "https:" && u.protocol !== "http:") || notOrigin) {
    throw new CcbError(
      "CONFIG_INVALID",
      `--public-url must be an origin (scheme://host[:port], no path or query), got ${u.protocol}//${u.host}${u.pathname}.`,
      { hint: "Route the paths of the gateway at the root of that origin (see the README's reverse-proxy example)." },
    );
  }
  const loopback = isLoopbackHost(u.hostname);
  if (u.protocol !== "https:" && !loopback) {
    throw new CcbError(
      "CONFIG_INVALID",
      `Refusing --public-url ${u.origin}: a non-loopback public URL must be https.`,
      {
        hint: "Terminate TLS at the proxy and give its https:// origin.",
      },
    );
  }
  if (!loopback && !token) {
    throw new CcbError(
      "CONFIG_INVALID",
      `Refusing --public-url ${u.origin} without a bearer token (--auth-token or CCB_AUTH_TOKEN) or OAuth (--oauth-issuer).`,
      { hint: "Anyone who can reach that origin could use /mcp." },
    );
  }
  return u;
}

/** The PEM files of --cert/--key (both or neither; undefined for neither), or CONFIG_INVALID saying which is wrong. */
export async function readTlsFiles(
  certFile: string | undefined,
  keyFile: string | undefined,
): Promise<{ cert: Buffer; key: Buffer } | undefined> {
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) {
    throw new CcbError("CONFIG_INVALID", "--cert and --key must be given together.", {
      hint: "Pass both PEM files to serve HTTPS.",
    });
  }
  const read = async (file: string, what: string) => {
    try {
      return await readFile(file);
    } catch (err) {
      throw new CcbError("CONFIG_INVALID", `Cannot read the TLS ${what} file ${file}: ${(err as Error).message}`);
    }
  };
  return { cert: await read(certFile, "certificate"), key: await read(keyFile, "key") };
}

/** A listener's flags as serve and link take them. */
export interface ListenerFlags {
  listener: Listener;
  host: string;
  certFile?: string | undefined;
  keyFile?: string | undefined;
  token: boolean;
  publicUrl?: string | undefined;
  trustProxy?: boolean | undefined;
}

/** The checked edge of a listener: its TLS material from the files, its public URL; or a refusal. */
export async function openExposure(
  f: ListenerFlags,
): Promise<{ tls?: { cert: Buffer; key: Buffer } | undefined; publicUrl?: URL | undefined }> {
  const tls = await readTlsFiles(f.certFile, f.keyFile);
  const publicUrl = f.publicUrl ? checkPublicUrl(f.publicUrl, f.token) : undefined;
  checkExposure({ ...f, tls: Boolean(tls), publicUrl });
  return { tls, publicUrl };
}

/** Host and Origin allow-lists of a gateway reached through `publicUrl` (a proxy's origin) and the machine's own names. */
export function admitPublicUrl(gateway: Gateway, publicUrl: URL | undefined): void {
  gateway.hosts.allowMachineNames();
  if (!publicUrl) return;
  gateway.hosts.allowExact(publicUrl.host);
  gateway.allowHost(`${publicUrl.hostname}:${publicUrl.port || (publicUrl.protocol === "https:" ? "443" : "80")}`);
  gateway.allowOwnOrigin(publicUrl.origin);
}

/** A gateway only this machine reaches, in plain HTTP at its own URL: one the shared workbench may be mounted on. */
export function isPrivateLoopback(gateway: Gateway, host: string, publicUrl: string): boolean {
  return gateway.scheme === "http" && isLoopbackHost(host) && publicUrl === gateway.url;
}
