import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { hostname } from "node:os";
import { join } from "node:path";
import { generate } from "selfsigned";
import { readTlsFiles } from "../net/exposure.ts";
import { configDir } from "../util/paths.ts";
import { writeSecretFile } from "../util/secrets.ts";

export interface TlsMaterial {
  cert: string | Buffer;
  key: string | Buffer;
  /** Where it came from: the user's files, the cache, or freshly generated. */
  source: "files" | "cache" | "generated";
  certPath: string;
}

const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;
const VALID_DAYS = 365;

export function sanNames(host: string | undefined): string[] {
  const names = new Set(["localhost", "127.0.0.1", "::1", hostname()]);
  if (host && host !== "0.0.0.0" && host !== "::") names.add(host);
  return [...names];
}

/**
 * `--cert/--key`, or a self-signed certificate for localhost, 127.0.0.1, ::1 and the host name,
 * cached 0600 under the config folder and renewed 30 days before expiry (or when names change).
 */
export async function loadTls(opts: {
  cert?: string | undefined;
  key?: string | undefined;
  host?: string | undefined;
  env?: NodeJS.ProcessEnv;
  now?: Date;
}): Promise<TlsMaterial> {
  const files = await readTlsFiles(opts.cert, opts.key);
  if (files) return { ...files, source: "files", certPath: opts.cert as string };
  const dir = join(configDir(opts.env), "tls");
  const certPath = join(dir, "link-cert.pem");
  const keyPath = join(dir, "link-key.pem");
  const names = sanNames(opts.host);
  const now = opts.now ?? new Date();
  try {
    const cert = readFileSync(certPath, "utf8");
    const key = readFileSync(keyPath, "utf8");
    const x = new X509Certificate(cert);
    const fresh = new Date(x.validTo).getTime() - now.getTime() > RENEW_BEFORE_MS;
    const covers = names.every((n) => (isIP(n) ? x.checkIP(n) : x.checkHost(n)) !== undefined);
    if (fresh && covers) return { cert, key, source: "cache", certPath };
  } catch {
    // missing or unreadable: generate below
  }
  const notAfter = new Date(now.getTime() + VALID_DAYS * 24 * 3600 * 1000);
  const pems = await generate([{ name: "commonName", value: "ccb link (self-signed)" }], {
    keyType: "ec",
    curve: "P-256",
    notBeforeDate: new Date(now.getTime() - 60_000),
    notAfterDate: notAfter,
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: names.map((n) => (isIP(n) ? { type: 7 as const, ip: n } : { type: 2 as const, value: n })),
      },
    ],
  });
  writeSecretFile(keyPath, pems.private);
  writeSecretFile(certPath, pems.cert);
  return { cert: pems.cert, key: pems.private, source: "generated", certPath };
}
