import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { importJWK, type JWK, SignJWT } from "jose";
import { silentLogger } from "../../../src/core/log.ts";
import { checkIssuerUrl, discoverIssuer, metadataUrls } from "../../../src/net/oauth/discovery.ts";
import { OAuthGuard } from "../../../src/net/oauth/guard.ts";
import { AccessTokenVerifier } from "../../../src/net/oauth/verifier.ts";
import { SCOPE_READ, SCOPE_WRITE, scopeCovers, scopeNeeded } from "../../../src/protocols/mcp/scopes.ts";
import { workspaceTools } from "../../../src/tools/catalog.ts";
import { type AuthServer, newSigningKey, startAuthServer } from "../../helpers/oidc.ts";

const RESOURCE = "https://ccb.example.test/mcp";

describe("oauth: issuer URLs and discovery", () => {
  let as: AuthServer;
  before(async () => {
    as = await startAuthServer();
  });
  after(() => as.close());

  it("metadata URLs: RFC 8414 with the path inserted, then OpenID Connect discovery", () => {
    assert.deepEqual(metadataUrls("https://id.example.test"), [
      "https://id.example.test/.well-known/oauth-authorization-server",
      "https://id.example.test/.well-known/openid-configuration",
    ]);
    assert.deepEqual(metadataUrls("https://id.example.test/realms/dev"), [
      "https://id.example.test/.well-known/oauth-authorization-server/realms/dev",
      "https://id.example.test/.well-known/openid-configuration/realms/dev",
      "https://id.example.test/realms/dev/.well-known/openid-configuration",
    ]);
  });

  it("an issuer is https, or http on loopback only; no query or fragment", () => {
    assert.equal(checkIssuerUrl("https://id.example.test/x"), "https://id.example.test/x");
    assert.equal(checkIssuerUrl("http://127.0.0.1:9000"), "http://127.0.0.1:9000");
    assert.throws(() => checkIssuerUrl("http://id.example.test"), /must be https/);
    assert.throws(() => checkIssuerUrl("https://id.example.test/?a=1"), /query/);
    assert.throws(() => checkIssuerUrl("not a url"), /is not a URL/);
  });

  it("reads a real issuer's metadata; refuses metadata that names another issuer", async () => {
    const m = await discoverIssuer(as.issuer);
    assert.equal(m.issuer, as.issuer);
    assert.equal(m.jwksUri, `${as.issuer}/jwks`);
    assert.equal(m.introspectionEndpoint, `${as.issuer}/token/introspection`);
    await assert.rejects(discoverIssuer(`${as.issuer}/`), /names another issuer/);
  });
});

describe("oauth: the JWKS refetch on an unknown kid is rate-limited", () => {
  let as: AuthServer;
  before(async () => {
    as = await startAuthServer();
  });
  after(() => as.close());

  /** A token for RESOURCE from the real issuer, signed with `key`. */
  async function token(key: JWK, kid = key.kid as string): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ scope: "ccb:read", client_id: "c" })
      .setProtectedHeader({ alg: "RS256", kid, typ: "at+jwt" })
      .setIssuer(as.issuer)
      .setAudience(RESOURCE)
      .setSubject("s")
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(await importJWK(key, "RS256"));
  }

  async function burst(cooldownMs: number | undefined): Promise<{ fetches: number; refused: number }> {
    const verifier = new AccessTokenVerifier({
      issuers: [await discoverIssuer(as.issuer)],
      audience: () => RESOURCE,
      ...(cooldownMs !== undefined ? { jwksCooldownMs: cooldownMs } : {}),
    });
    const before = as.jwksFetches();
    const ok = await verifier.verify(await token(as.keys[0]?.privateJwk as JWK));
    assert.ok(ok.ok, "the real key passes");
    let refused = 0;
    const stranger = await newSigningKey();
    for (let i = 0; i < 20; i++) {
      const v = await verifier.verify(await token(stranger.privateJwk, `unknown-${i}`));
      if (!v.ok) refused++;
    }
    return { fetches: as.jwksFetches() - before, refused };
  }

  it("20 tokens naming unknown keys cause no further fetch within the default 30 s cooldown", async () => {
    const r = await burst(undefined);
    console.error(`oauth: default cooldown: ${r.fetches} JWKS fetch(es) for 1 good + 20 unknown-kid tokens`);
    assert.equal(r.refused, 20);
    assert.equal(r.fetches, 1);
  });

  it("positive control: without a cooldown each unknown kid refetches (the counter sees it)", async () => {
    const r = await burst(0);
    console.error(`oauth: no cooldown: ${r.fetches} JWKS fetches for 1 good + 20 unknown-kid tokens`);
    assert.equal(r.refused, 20);
    assert.ok(r.fetches > 10, `${r.fetches} fetches`);
  });
});

describe("oauth: challenges", () => {
  it("401 without a token, 401 invalid_token, 403 insufficient_scope", () => {
    const guard = new OAuthGuard({
      verifier: {} as AccessTokenVerifier,
      base: () => "https://ccb.example.test",
      path: "/mcp",
      issuers: ["https://id.example.test"],
      scopes: [SCOPE_READ, SCOPE_WRITE],
      challengeScope: `${SCOPE_READ} ${SCOPE_WRITE}`,
      name: "ccb",
      log: silentLogger,
    });
    const meta = `resource_metadata="https://ccb.example.test/.well-known/oauth-protected-resource/mcp"`;
    assert.equal(guard.challenge("missing"), `Bearer ${meta}, scope="ccb:read ccb:write"`);
    assert.equal(
      guard.challenge("invalid", 'bad "x"'),
      `Bearer ${meta}, error="invalid_token", error_description="bad x"`,
    );
    assert.equal(
      guard.challenge({ insufficientScope: "ccb:write" }),
      `Bearer ${meta}, error="insufficient_scope", scope="ccb:write"`,
    );
    assert.equal(guard.resource(), RESOURCE);
  });
});

describe("oauth: scopes of MCP messages", () => {
  const call = (name: string) => ({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name } });

  it("a tool needs ccb:read when annotated read-only (vscode_open excepted), else ccb:write", () => {
    for (const t of workspaceTools) {
      const want = t.annotations.readOnlyHint && t.name !== "vscode_open" ? SCOPE_READ : SCOPE_WRITE;
      assert.equal(scopeNeeded(call(t.name), workspaceTools), want, t.name);
    }
    assert.equal(scopeNeeded(call("fs_read"), workspaceTools), SCOPE_READ);
    assert.equal(scopeNeeded(call("fs_write"), workspaceTools), SCOPE_WRITE);
    assert.equal(scopeNeeded(call("vscode_open"), workspaceTools), SCOPE_WRITE);
    assert.equal(scopeNeeded(call("no_such_tool"), workspaceTools), SCOPE_READ, "answered InvalidParams, runs nothing");
  });

  it("listings, the session and notifications need ccb:read; other methods ccb:write", () => {
    for (const method of [
      "initialize",
      "ping",
      "tools/list",
      "resources/read",
      "prompts/list",
      "server/discover",
      "subscriptions/listen",
      "tasks/get",
    ])
      assert.equal(scopeNeeded({ jsonrpc: "2.0", id: 1, method }, workspaceTools), SCOPE_READ, method);
    assert.equal(scopeNeeded({ jsonrpc: "2.0", method: "notifications/initialized" }, workspaceTools), SCOPE_READ);
    assert.equal(scopeNeeded({ jsonrpc: "2.0", id: 1, result: {} }, workspaceTools), SCOPE_READ);
    assert.equal(scopeNeeded({ jsonrpc: "2.0", id: 1, method: "tasks/cancel" }, workspaceTools), SCOPE_WRITE);
  });

  it("ccb:write covers ccb:read, not the other way round; no scope covers nothing", () => {
    assert.ok(scopeCovers([SCOPE_WRITE], SCOPE_READ));
    assert.ok(scopeCovers([SCOPE_READ], SCOPE_READ));
    assert.ok(!scopeCovers([SCOPE_READ], SCOPE_WRITE));
    assert.ok(!scopeCovers(["openid"], SCOPE_READ));
    assert.ok(!scopeCovers([], SCOPE_READ));
  });
});
