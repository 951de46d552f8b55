import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { createServer } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  Client as ModernClient,
  ClientCredentialsProvider as ModernClientCredentials,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from "@modelcontextprotocol/client";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { exportSPKI, importJWK, type JWK, SignJWT } from "jose";
import { spawnCcb } from "../helpers/cli.ts";
import { type AuthServer, authorizeByBrowser, newSigningKey, startAuthServer } from "../helpers/oidc.ts";
import {
  cleanEnv,
  type HttpServe,
  INITIALIZE,
  MCP_POST_HEADERS,
  type RawResponse,
  rawRequest,
  rpcMessages,
  startHttpServe,
  waitExit,
} from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * `ccb serve --http --oauth-issuer`: /mcp as an OAuth 2.1 resource server (the MCP authorization
 * spec), against a real authorization server (oidc-provider) started here. The SDK client's own
 * OAuth flows reach the tools; every attack on the token check is refused, each beside a positive
 * control that passes through the same path.
 */
const ws = tmpdirFixture({ prefix: "ccb-oauth-ws-" });
let as: AuthServer;
let other: AuthServer;
let serve: HttpServe;

/** What each attack got back, printed for the record. */
const seen: string[] = [];
function record(name: string, r: RawResponse): RawResponse {
  seen.push(`${name}: ${r.status} ${r.headers["www-authenticate"] ?? ""}`);
  return r;
}

function initialize(token: string | undefined, path = ""): Promise<RawResponse> {
  return rawRequest(`${serve.url}${path}`, {
    method: "POST",
    headers: { ...MCP_POST_HEADERS, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: INITIALIZE,
  });
}

/** A token signed with `key` (the authorization server's real key unless a test says otherwise). */
async function forge(claims: Record<string, unknown>, key: JWK, header: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload = {
    iss: as.issuer,
    aud: serve.url,
    sub: "mallory",
    client_id: "forger",
    scope: "ccb:read ccb:write",
    iat: now,
    exp: now + 600,
    ...claims,
  };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg as string, kid: key.kid as string, typ: "at+jwt", ...header })
    .sign(await importJWK(key, key.alg as string));
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

/** An MCP session opened by raw requests with `token`; returns a function posting one more request. */
async function rawSession(token: string): Promise<(body: unknown) => Promise<RawResponse>> {
  const init = await initialize(token);
  assert.equal(init.status, 200, init.body);
  const session = init.headers["mcp-session-id"] as string;
  const headers = {
    ...MCP_POST_HEADERS,
    authorization: `Bearer ${token}`,
    "mcp-session-id": session,
    "mcp-protocol-version": "2025-06-18",
  };
  const post = (body: unknown) => rawRequest(serve.url, { method: "POST", headers, body: JSON.stringify(body) });
  assert.equal((await post({ jsonrpc: "2.0", method: "notifications/initialized" })).status, 202);
  return post;
}

const call = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

describe("ccb serve --oauth-issuer: an OAuth 2.1 resource server", { timeout: 300_000 }, () => {
  before(async () => {
    as = await startAuthServer();
    other = await startAuthServer();
    // No cooldown between JWKS fetches on an unknown kid, so the rotation case needs no waiting
    // (the rate limit itself is measured in test/unit/net/oauth.test.ts).
    serve = await startHttpServe(ws.path, ["--oauth-issuer", as.issuer], { CCB_OAUTH_JWKS_COOLDOWN_MS: "0" });
  });
  after(async () => {
    console.error(`serve-oauth: what each request got back:\n  ${seen.join("\n  ")}`);
    await serve?.stop();
    await as?.close();
    await other?.close();
    ws.cleanup();
  });

  it("publishes its Protected Resource Metadata at both well-known URLs", async () => {
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const r = await rawRequest(`${serve.base}${path}`);
      assert.equal(r.status, 200);
      console.error(`serve-oauth: GET ${path} -> ${r.body}`);
      assert.deepEqual(JSON.parse(r.body), {
        resource: serve.url,
        authorization_servers: [as.issuer],
        scopes_supported: ["ccb:read", "ccb:write"],
        bearer_methods_supported: ["header"],
        resource_name: "ccb workspace",
      });
    }
    assert.equal((await rawRequest(`${serve.base}/.well-known/oauth-protected-resource/other`)).status, 404);
  });

  it("answers a request without a token 401 with a challenge naming the metadata and the scopes", async () => {
    const r = record("no token", await initialize(undefined));
    assert.equal(r.status, 401);
    assert.equal(
      r.headers["www-authenticate"],
      `Bearer resource_metadata="${serve.base}/.well-known/oauth-protected-resource/mcp", scope="ccb:read ccb:write"`,
    );
  });

  it("the SDK client's client-credentials flow (ClientCredentialsProvider) reaches the tools", async () => {
    const c = as.clients.rw;
    const transport = new StreamableHTTPClientTransport(new URL(serve.url), {
      authProvider: new ClientCredentialsProvider({
        clientId: c.id,
        clientSecret: c.secret,
        scope: c.scope,
        expectedIssuer: as.issuer,
      }),
    });
    const client = new Client({ name: "oauth-machine", version: "1.0.0" });
    await client.connect(transport);
    try {
      assert.ok((await client.listTools()).tools.some((t) => t.name === "fs_write"));
      const w = await client.callTool({ name: "fs_write", arguments: { path: "m.txt", content: "machine\n" } });
      assert.ok(!w.isError, JSON.stringify(w));
      const r = await client.callTool({ name: "fs_read", arguments: { path: "m.txt" } });
      assert.match(JSON.stringify(r.content), /machine/);
    } finally {
      await client.close();
    }
    assert.match(serve.stderr(), /oauth: signed in sub=machine-rw client=machine-rw/);
  });

  it("2026-07-28: the 2.x client's client-credentials flow reaches the tools with no session; scopes hold per request", async () => {
    const c = as.clients.rw;
    const client = new ModernClient(
      { name: "oauth-machine-2026", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(
      new ModernHttpTransport(new URL(serve.url), {
        authProvider: new ModernClientCredentials({
          clientId: c.id,
          clientSecret: c.secret,
          scope: c.scope,
          expectedIssuer: as.issuer,
        }),
      }),
    );
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
      const w = await client.callTool({ name: "fs_write", arguments: { path: "m26.txt", content: "modern\n" } });
      assert.ok(!w.isError, JSON.stringify(w));
      const r = await client.callTool({ name: "fs_read", arguments: { path: "m26.txt" } });
      assert.match(JSON.stringify(r.content), /modern/);
    } finally {
      await client.close();
    }
    // The same stateless POST with a read-only token: reads pass, a write gets 403 insufficient_scope.
    const ro = await as.clientCredentials(as.clients.ro, serve.url);
    const modern = (id: number, name: string, args: Record<string, unknown>) =>
      fetch(serve.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${ro}`,
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": name,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: {
            name,
            arguments: args,
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        }),
      });
    const read = await modern(1, "fs_read", { path: "m26.txt" });
    assert.equal(read.status, 200);
    assert.equal(read.headers.get("mcp-session-id"), null);
    const write = await modern(2, "fs_write", { path: "no.txt", content: "no" });
    assert.equal(write.status, 403);
    assert.match(write.headers.get("www-authenticate") ?? "", /error="insufficient_scope", scope="ccb:write"/);
    const none = await fetch(serve.url, { method: "POST", headers: { "mcp-protocol-version": "2026-07-28" } });
    assert.equal(none.status, 401);
    assert.match(none.headers.get("www-authenticate") ?? "", /resource_metadata=/);
  });

  it("the SDK client's authorization-code flow (dynamic registration, PKCE, login and consent) reaches the tools", async () => {
    const redirect = "http://127.0.0.1:9/callback";
    let info: OAuthClientInformationMixed | undefined;
    let tokens: OAuthTokens | undefined;
    let verifier = "";
    let authorizationUrl: URL | undefined;
    const provider: OAuthClientProvider = {
      get redirectUrl() {
        return redirect;
      },
      get clientMetadata(): OAuthClientMetadata {
        return {
          client_name: "ccb e2e host",
          redirect_uris: [redirect],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          token_endpoint_auth_method: "none",
        };
      },
      clientInformation: () => info,
      saveClientInformation: (i) => {
        info = i;
      },
      tokens: () => tokens,
      saveTokens: (t) => {
        tokens = t;
      },
      redirectToAuthorization: (url) => {
        authorizationUrl = url;
      },
      saveCodeVerifier: (v) => {
        verifier = v;
      },
      codeVerifier: () => verifier,
    };
    const first = new StreamableHTTPClientTransport(new URL(serve.url), { authProvider: provider });
    await assert.rejects(new Client({ name: "h", version: "1" }).connect(first), /Unauthorized/);
    assert.ok(authorizationUrl, "the SDK sent the person to the authorization server");
    assert.equal(authorizationUrl.searchParams.get("resource"), serve.url);
    assert.equal(authorizationUrl.searchParams.get("code_challenge_method"), "S256");
    const code = await authorizeByBrowser(authorizationUrl, "alice", redirect);
    await first.finishAuth(code);
    assert.ok(tokens?.access_token);

    const client = new Client({ name: "oauth-person", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(serve.url), { authProvider: provider }));
    try {
      const w = await client.callTool({ name: "fs_write", arguments: { path: "p.txt", content: "person\n" } });
      assert.ok(!w.isError, JSON.stringify(w));
    } finally {
      await client.close();
    }
    assert.match(serve.stderr(), /oauth: signed in sub=alice client=\S+ iss=/);
    assert.ok(!serve.stderr().includes(tokens.access_token), "the token is never logged");
  });

  it("a positive control: a token minted here with the server's real key and right claims passes", async () => {
    const key = as.keys[0]?.privateJwk as JWK;
    assert.equal(record("forged with the real key, right claims", await initialize(await forge({}, key))).status, 200);
    assert.equal(
      record(
        "client credentials for this resource",
        await initialize(await as.clientCredentials(as.clients.rw, serve.url)),
      ).status,
      200,
    );
  });

  it("refuses a token issued for another resource (audience)", async () => {
    const token = await as.clientCredentials(as.clients.rw, "https://other.example.test/mcp");
    const r = record("audience: another resource", await initialize(token));
    assert.equal(r.status, 401);
    assert.match(String(r.headers["www-authenticate"]), /error="invalid_token"/);
    assert.match(String(r.headers["www-authenticate"]), /resource_metadata="/);
    assert.match(serve.stderr(), /refused an access token \(audience is not this resource\)/);
  });

  it("refuses a token of another issuer, and one claiming our issuer but signed by another", async () => {
    const foreign = await other.clientCredentials(other.clients.rw, serve.url);
    const r = record("another issuer", await initialize(foreign));
    assert.equal(r.status, 401);
    assert.match(String(r.headers["www-authenticate"]), /invalid_token/);
    const lying = await forge({}, other.keys[0]?.privateJwk as JWK);
    assert.equal(record("our iss, another issuer's key", await initialize(lying)).status, 401);
  });

  it("refuses an expired token and one not yet valid (beyond the 30 s skew)", async () => {
    const key = as.keys[0]?.privateJwk as JWK;
    const now = Math.floor(Date.now() / 1000);
    const expired = await forge({ exp: now - 120, iat: now - 720 }, key);
    assert.equal(record("expired", await initialize(expired)).status, 401);
    const early = await forge({ nbf: now + 3600 }, key);
    assert.equal(record("not yet valid", await initialize(early)).status, 401);
    const inSkew = await forge({ nbf: now + 5 }, key);
    assert.equal(record("nbf 5 s ahead (inside the skew)", await initialize(inSkew)).status, 200);
  });

  it("refuses alg none and HMAC signed with the public key", async () => {
    const k = as.keys[0] as { kid: string; publicJwk: JWK };
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: as.issuer, aud: serve.url, sub: "mallory", exp: now + 600, iat: now, scope: "ccb:write" };
    const none = `${b64({ alg: "none", typ: "at+jwt", kid: k.kid })}.${b64(claims)}.`;
    assert.equal(record("alg none", await initialize(none)).status, 401);
    const pem = await exportSPKI((await importJWK(k.publicJwk, "RS256")) as CryptoKey);
    for (const [what, secret] of [
      ["PEM", pem],
      ["JWK", JSON.stringify(k.publicJwk)],
      ["modulus", k.publicJwk.n as string],
    ] as const) {
      const input = `${b64({ alg: "HS256", typ: "at+jwt", kid: k.kid })}.${b64(claims)}`;
      const sig = createHmac("sha256", secret).update(input).digest("base64url");
      assert.equal(
        record(`HS256 keyed with the public key (${what})`, await initialize(`${input}.${sig}`)).status,
        401,
      );
    }
  });

  it("refuses a token in the query string (even a valid one)", async () => {
    const token = await as.clientCredentials(as.clients.rw, serve.url);
    const r = record("valid token in ?access_token=", await initialize(undefined, `?access_token=${token}`));
    assert.equal(r.status, 400);
    assert.equal(record("the same token in the header", await initialize(token)).status, 200);
  });

  it("refuses an opaque token when no introspection is configured", async () => {
    const opaque = await as.clientCredentials(as.clients.opaque, serve.url);
    assert.ok(opaque.split(".").length !== 3);
    assert.equal(record("opaque token, no introspection", await initialize(opaque)).status, 401);
  });

  it("a ccb:read token lists and reads; a tool that changes anything gets 403 insufficient_scope", async () => {
    const post = await rawSession(await as.clientCredentials(as.clients.ro, serve.url));
    const list = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    assert.equal(list.status, 200);
    const read = await post(call(3, "fs_read", { path: "m.txt" }));
    assert.equal(record("ccb:read token: fs_read", read).status, 200);
    assert.match(read.body, /machine/);
    for (const [id, name, args] of [
      [4, "fs_write", { path: "ro.txt", content: "no" }],
      [5, "terminal_create", {}],
      [6, "vscode_open", {}],
    ] as const) {
      const r = record(`ccb:read token: ${name}`, await post(call(id, name, args)));
      assert.equal(r.status, 403, name);
      assert.equal(
        r.headers["www-authenticate"],
        `Bearer resource_metadata="${serve.base}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="ccb:write", error_description="Forbidden: the tool ${name} needs the OAuth scope ccb:write; this token has ccb:read."`,
      );
      assert.equal(rpcMessages(r.body)[0]?.id, id);
    }
    assert.match(serve.stderr(), /oauth: sub=machine-ro client=machine-ro calls the tool fs_read/);
    assert.match(
      serve.stderr(),
      /oauth: sub=machine-ro client=machine-ro refused the tool fs_write \(needs ccb:write\)/,
    );
    const post2 = await rawSession(await as.clientCredentials(as.clients.rw, serve.url));
    assert.equal(
      record("ccb:write token: fs_write", await post2(call(7, "fs_write", { path: "rw.txt", content: "y" }))).status,
      200,
    );
  });

  it("a terminal started with a token is attributed to its subject: in the log at its creation and in terminal_list", async () => {
    const post = await rawSession(await as.clientCredentials(as.clients.rw, serve.url));
    const made = await post(call(8, "terminal_create", { command: "sleep", args: ["30"], title: "by-rw" }));
    assert.equal(made.status, 200, made.body);
    const id = /"id":"(t\d+)"/.exec(made.body)?.[1] as string;
    assert.ok(id, made.body);
    assert.match(
      serve.stderr(),
      new RegExp(`terminal ${id} \\(sleep, pid \\d+\\) started by sub=machine-rw client=machine-rw`),
    );
    const listed = await post(call(9, "terminal_list", {}));
    assert.match(
      listed.body,
      new RegExp(`${id} \\\\"by-rw\\\\": sleep 30 .*started by sub=machine-rw client=machine-rw`),
    );
    assert.match(listed.body, /"startedBy":"sub=machine-rw client=machine-rw"/);
    // and what it changes is recorded as theirs in the workspace's checkpoints
    assert.equal((await post(call(10, "fs_write", { path: "by-rw.txt", content: "rw" }))).status, 200);
    const cps = await post(call(11, "checkpoint_list", { path: "by-rw.txt" }));
    assert.match(cps.body, /fs_write by mcp:[^"]* as sub=machine-rw client=machine-rw: by-rw\.txt/);
    assert.match(cps.body, /"identity":"sub=machine-rw client=machine-rw"/);
    await post(call(10, "terminal_kill", { id }));
  });

  it("refuses a key removed from the JWKS after a rotation (and accepts the new key)", async () => {
    const before = await as.clientCredentials(as.clients.rw, serve.url);
    assert.equal(record("old key, before rotation", await initialize(before)).status, 200);
    const fetches = as.jwksFetches();
    await as.rotate([await newSigningKey()]);
    const fresh = await as.clientCredentials(as.clients.rw, serve.url);
    assert.equal(record("new key after rotation (unknown kid: JWKS refetched)", await initialize(fresh)).status, 200);
    assert.ok(as.jwksFetches() > fetches, "ccb fetched the new key set");
    const r = record("old key after rotation", await initialize(before));
    assert.equal(r.status, 401);
    assert.match(String(r.headers["www-authenticate"]), /invalid_token/);
  });

  it("a key the issuer removed stops working within a minute, with no token of a new key to trigger a refetch", async () => {
    const token = await as.clientCredentials(as.clients.rw, serve.url);
    assert.equal(record("current key, before its removal", await initialize(token)).status, 200);
    const fetches = as.jwksFetches();
    // The issuer drops the key (compromised): nobody presents a token of the new one.
    await as.rotate([await newSigningKey()]);
    const removedAt = Date.now();
    let last: RawResponse | undefined;
    // ccb fetched the set at most just before the removal: a minute after it, the key is gone
    // (the polling itself adds a request's time).
    while (Date.now() - removedAt < 65_000) {
      last = await initialize(token);
      if (last.status === 401) break;
      assert.equal(last.status, 200, last.body);
      await new Promise((r) => setTimeout(r, 2000));
    }
    record(`removed key, ${Math.round((Date.now() - removedAt) / 1000)} s after its removal`, last as RawResponse);
    assert.equal(last?.status, 401, "the removed key is refused within a minute");
    assert.match(String(last?.headers["www-authenticate"]), /signing key not in the issuer/);
    assert.ok(as.jwksFetches() > fetches, "ccb fetched the key set again by itself");
  });
});

describe("ccb serve --oauth-issuer: introspection of opaque tokens", { timeout: 300_000 }, () => {
  const dir = tmpdirFixture({ prefix: "ccb-oauth-intro-" });
  let auth: AuthServer;
  let s: HttpServe;
  before(async () => {
    auth = await startAuthServer();
    s = await startHttpServe(
      dir.path,
      ["--oauth-issuer", auth.issuer, "--oauth-client-id", auth.clients.introspector.id],
      {
        CCB_OAUTH_CLIENT_SECRET: auth.clients.introspector.secret,
      },
    );
  });
  after(async () => {
    await s?.stop();
    await auth?.close();
    dir.cleanup();
  });
  const init = (token: string) =>
    rawRequest(s.url, {
      method: "POST",
      headers: { ...MCP_POST_HEADERS, authorization: `Bearer ${token}` },
      body: INITIALIZE,
    });

  it("accepts an opaque token for this resource, refuses one for another and an unknown one", async () => {
    const good = await auth.clientCredentials(auth.clients.opaque, s.url);
    assert.equal(record("introspection: opaque token for this resource", await init(good)).status, 200);
    const elsewhere = await auth.clientCredentials(auth.clients.opaque, "https://other.example.test/mcp");
    assert.equal(record("introspection: opaque token for another resource", await init(elsewhere)).status, 401);
    assert.equal(record("introspection: unknown opaque token", await init("x".repeat(43))).status, 401);
    const jwt = await auth.clientCredentials(auth.clients.rw, s.url);
    assert.equal(record("introspection configured: a JWT is still checked locally", await init(jwt)).status, 200);
    const stranger = await startAuthServer();
    try {
      const foreign = await stranger.clientCredentials(stranger.clients.rw, s.url);
      assert.equal((await init(foreign)).status, 401, "another issuer's JWT");
    } finally {
      await stranger.close();
    }
    assert.ok(!s.stderr().includes(auth.clients.introspector.secret));
  });

  it("a client sending made-up tokens gets a bounded number introspected; another client and cached tokens are not held back", async () => {
    const good = await auth.clientCredentials(auth.clients.opaque, s.url);
    assert.equal((await init(good)).status, 200, "control: a real opaque token (now cached)");
    let refusedAt = 0;
    let r: RawResponse | undefined;
    for (let i = 1; i <= 40; i++) {
      r = await init(`made-up-${i}-${"y".repeat(40)}`);
      assert.equal(r.status, 401);
      if (/too many tokens to introspect/.test(String(r.headers["www-authenticate"]))) {
        refusedAt = i;
        break;
      }
    }
    record(`introspection: made-up token number ${refusedAt} from one client`, r as RawResponse);
    assert.ok(refusedAt > 0 && refusedAt <= 30, `the budget held at ${refusedAt}`);
    assert.equal((await init(good)).status, 200, "a cached token of the same client still passes");
    // control: another client (another loopback address) still gets its tokens checked
    const fresh = await auth.clientCredentials(auth.clients.opaque, s.url);
    const fromOther = await rawRequest(s.url, {
      method: "POST",
      headers: { ...MCP_POST_HEADERS, authorization: `Bearer ${fresh}` },
      body: INITIALIZE,
      localAddress: "127.0.0.2",
    });
    assert.equal(record("introspection: another client's real token", fromOther).status, 200);
  });
});

describe("ccb serve --oauth-issuer behind a public URL (a proxy or ingress)", { timeout: 300_000 }, () => {
  const dir = tmpdirFixture({ prefix: "ccb-oauth-pub-" });
  const PUBLIC = "https://ccb.example.test";
  let auth: AuthServer;
  let s: HttpServe;
  before(async () => {
    auth = await startAuthServer();
    s = await startHttpServe(dir.path, ["--oauth-issuer", auth.issuer, "--public-url", PUBLIC]);
  });
  after(async () => {
    await s?.stop();
    await auth?.close();
    dir.cleanup();
  });
  const viaProxy = (path: string, token?: string, body?: string) =>
    rawRequest(`${s.base}${path}`, {
      method: body ? "POST" : "GET",
      headers: {
        host: "ccb.example.test",
        ...(body ? MCP_POST_HEADERS : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(body ? { body } : {}),
    });

  it("the resource is the public URL's /mcp: metadata, challenge and audience follow it", async () => {
    const prm = await viaProxy("/.well-known/oauth-protected-resource/mcp");
    assert.equal(JSON.parse(prm.body).resource, `${PUBLIC}/mcp`);
    const none = await viaProxy("/mcp", undefined, INITIALIZE);
    assert.equal(none.status, 401);
    assert.match(
      String(none.headers["www-authenticate"]),
      /^Bearer resource_metadata="https:\/\/ccb\.example\.test\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
    const good = await auth.clientCredentials(auth.clients.rw, `${PUBLIC}/mcp`);
    assert.equal(
      record("public URL: token for https://ccb.example.test/mcp", await viaProxy("/mcp", good, INITIALIZE)).status,
      200,
    );
    const local = await auth.clientCredentials(auth.clients.rw, s.url);
    assert.equal(
      record("public URL: token for the listener's own URL", await viaProxy("/mcp", local, INITIALIZE)).status,
      401,
    );
  });
});

describe("ccb serve --oauth-issuer: start-up rules", { timeout: 120_000 }, () => {
  const dir = tmpdirFixture({ prefix: "ccb-oauth-start-" });
  after(() => dir.cleanup());
  const start = async (args: string[], env: Record<string, string> = {}) => {
    const child = spawnCcb(["serve", "--no-workbench", "--http", "--port", "0", "--workspace", dir.path, ...args], {
      env: cleanEnv(env),
    });
    let err = "";
    child.stderr?.on("data", (d: Buffer) => (err += d.toString("utf8")));
    const listening = new Promise<boolean>((resolve) => {
      child.stderr?.on("data", () => {
        if (/listening on/.test(err)) resolve(true);
      });
      child.once("exit", () => resolve(false));
    });
    const up = await listening;
    if (up) child.kill("SIGTERM");
    const exit = await waitExit(child);
    return { up, exit, err };
  };

  it("stops with a clear error when the issuer cannot be reached", async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, "127.0.0.1", () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const r = await start(["--oauth-issuer", `http://127.0.0.1:${port}`]);
    assert.equal(r.up, false);
    assert.equal(r.exit.code, 1);
    assert.match(r.err, new RegExp(`Cannot reach the authorization server http://127\\.0\\.0\\.1:${port}`));
    assert.match(r.err, /ECONNREFUSED/);
  });

  it("refuses a static token beside OAuth unless asked, then accepts both", async () => {
    const auth = await startAuthServer();
    try {
      const token = "static-token-0123456789abcdef0123456789";
      const refused = await start(["--oauth-issuer", auth.issuer], { CCB_AUTH_TOKEN: token });
      assert.equal(refused.up, false);
      assert.match(refused.err, /Both --oauth-issuer and a static bearer token/);
      const s = await startHttpServe(dir.path, ["--oauth-issuer", auth.issuer, "--oauth-allow-static-token"], {
        CCB_AUTH_TOKEN: token,
      });
      try {
        const post = (t: string) =>
          rawRequest(s.url, {
            method: "POST",
            headers: { ...MCP_POST_HEADERS, authorization: `Bearer ${t}` },
            body: INITIALIZE,
          });
        assert.equal((await post(token)).status, 200);
        assert.equal((await post(await auth.clientCredentials(auth.clients.rw, s.url))).status, 200);
        assert.equal((await post("wrong-static-token")).status, 401);
      } finally {
        await s.stop();
      }
    } finally {
      await auth.close();
    }
  });

  it("a non-loopback address counts OAuth as its credential (TLS still required) and needs the public URL", async () => {
    const auth = await startAuthServer();
    try {
      const r = await start([
        "--host",
        "0.0.0.0",
        "--oauth-issuer",
        auth.issuer,
        "--public-url",
        "https://ccb.example.test",
      ]);
      assert.equal(r.up, false);
      assert.match(r.err, /needs TLS \(--cert and --key\)\./);
      const noUrl = await start(["--host", "0.0.0.0", "--oauth-issuer", auth.issuer]);
      assert.equal(noUrl.up, false);
      assert.match(noUrl.err, /OAuth on 0\.0\.0\.0 needs --public-url/);
    } finally {
      await auth.close();
    }
  });
});
