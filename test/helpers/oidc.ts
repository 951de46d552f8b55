import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import Provider from "oidc-provider";
import { newToken } from "../../src/util/secrets.ts";

/**
 * A real authorization server for tests: oidc-provider (a certified OpenID provider) on loopback
 * with dynamic client registration, PKCE, resource indicators (JWT access tokens for the resource
 * the client names), client credentials, introspection and its development login/consent pages.
 * Its signing keys are the test's own, so a test can also forge tokens with the real key.
 */

export interface SigningKey {
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

export interface MachineClient {
  id: string;
  secret: string;
  scope: string;
}

export interface AuthServer {
  issuer: string;
  port: number;
  keys: SigningKey[];
  /** Client-credentials clients: `rw` (ccb:read ccb:write), `ro` (ccb:read), `opaque` (opaque tokens), `introspector`. */
  clients: Record<"rw" | "ro" | "opaque" | "introspector", MachineClient>;
  /** How many times its JWKS was fetched. */
  jwksFetches(): number;
  /** Restart on the same issuer and port with other signing keys (a key rotation). */
  rotate(keys: SigningKey[]): Promise<void>;
  /** An access token by client credentials for `resource` (what the SDK does, by hand for attacks). */
  clientCredentials(client: MachineClient, resource: string, scope?: string): Promise<string>;
  close(): Promise<void>;
}

export async function newSigningKey(alg = "RS256"): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = newToken(8);
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg, use: "sig" };
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: "sig" };
  return { kid, privateJwk, publicJwk };
}

export async function startAuthServer(options: { keys?: SigningKey[] } = {}): Promise<AuthServer> {
  let keys = options.keys ?? [await newSigningKey()];
  const machine = (id: string, scope: string): MachineClient => ({ id, secret: newToken(24), scope });
  const clients = {
    rw: machine("machine-rw", "ccb:read ccb:write"),
    ro: machine("machine-ro", "ccb:read"),
    opaque: machine("machine-opaque", "ccb:read ccb:write"),
    introspector: machine("ccb-introspector", ""),
  };
  let fetches = 0;
  let handler:
    | ((req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void)
    | undefined;
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith("/jwks")) fetches++;
    if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;

  const build = () => {
    const provider = new Provider(issuer, {
      clients: Object.values(clients).map((c) => ({
        client_id: c.id,
        client_secret: c.secret,
        grant_types: c.scope ? ["client_credentials"] : [],
        response_types: [],
        redirect_uris: [],
        ...(c.scope ? { scope: c.scope } : {}),
      })),
      jwks: { keys: keys.map((k) => k.privateJwk) },
      scopes: ["openid", "offline_access", "ccb:read", "ccb:write"],
      findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id }) }),
      pkce: { required: () => true },
      features: {
        devInteractions: { enabled: true },
        registration: { enabled: true },
        clientCredentials: { enabled: true },
        introspection: { enabled: true },
        revocation: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => undefined,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string, client: { clientId: string }) => ({
            scope: "ccb:read ccb:write",
            audience: resource,
            accessTokenTTL: 600,
            accessTokenFormat: client.clientId === clients.opaque.id ? "opaque" : "jwt",
            jwt: { sign: { alg: keys[0]?.privateJwk.alg ?? "RS256" } },
          }),
        },
      },
    } as ConstructorParameters<typeof Provider>[1]);
    handler = provider.callback() as typeof handler;
  };
  build();

  return {
    issuer,
    port,
    get keys() {
      return keys;
    },
    clients,
    jwksFetches: () => fetches,
    async rotate(next) {
      keys = next;
      build();
    },
    async clientCredentials(client, resource, scope = client.scope) {
      const res = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ grant_type: "client_credentials", resource, scope }).toString(),
      });
      const body = (await res.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!body.access_token) throw new Error(`token request failed: ${body.error}: ${body.error_description}`);
      return body.access_token;
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/**
 * The development login and consent pages of oidc-provider, driven over HTTP the way a person
 * would click through them: follow the authorization URL, sign in as `login`, consent, and return
 * the `code` delivered to the redirect URI.
 */
export async function authorizeByBrowser(authorizationUrl: URL, login: string, redirectUri: string): Promise<string> {
  const jar = new Map<string, string>();
  const remember = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const eq = (pair ?? "").indexOf("=");
      if (eq > 0) jar.set((pair as string).slice(0, eq).trim(), (pair as string).slice(eq + 1).trim());
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  let url = authorizationUrl.href;
  let body: string | undefined;
  for (let step = 0; step < 20; step++) {
    const res = await fetch(url, {
      method: body ? "POST" : "GET",
      redirect: "manual",
      headers: { cookie: cookie(), ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
      ...(body ? { body } : {}),
    });
    remember(res);
    body = undefined;
    const location = res.headers.get("location");
    if (location) {
      const next = new URL(location, url);
      if (next.href.startsWith(redirectUri)) {
        const code = next.searchParams.get("code");
        if (!code)
          throw new Error(
            `authorization refused: ${next.searchParams.get("error")}: ${next.searchParams.get("error_description")}`,
          );
        return code;
      }
      url = next.href;
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`authorization step ${url} answered ${res.status}: ${html.slice(0, 300)}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`no form at ${url}: ${html.slice(0, 300)}`);
    url = new URL(action.replace(/&amp;/g, "&"), url).href;
    body = /name="login"/.test(html)
      ? new URLSearchParams({ prompt: "login", login, password: "any" }).toString()
      : new URLSearchParams({ prompt: "consent" }).toString();
  }
  throw new Error("authorization did not reach the redirect URI");
}
