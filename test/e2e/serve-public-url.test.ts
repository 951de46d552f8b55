import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { newToken } from "../../src/util/secrets.ts";
import { spawnCcb } from "../helpers/cli.ts";
import { cleanEnv, INITIALIZE, MCP_POST_HEADERS, rawRequest, waitExit } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { bootWorkbench, type Workbench } from "../helpers/workbench.ts";

/**
 * `ccb serve --public-url`: the origin a reverse proxy or ingress serves ccb at. With the real
 * code-server workbench: the App's CSP request, vscode_open's links and the Host allow-list use it.
 */
const PUBLIC = "https://ccb.example.test";
const TOKEN = newToken(32);
const ws = tmpdirFixture({ prefix: "ccb-pub-ws-" });
const home = tmpdirFixture({ prefix: "ccb-pub-home-" });
let wb: Workbench;

describe("ccb serve --public-url with a workbench", { timeout: 600_000 }, () => {
  before(
    async () => {
      wb = await bootWorkbench(ws.path, home.path, ["--public-url", PUBLIC], {
        env: { CCB_AUTH_TOKEN: TOKEN },
        headers: { authorization: `Bearer ${TOKEN}` },
      });
    },
    { timeout: 400_000 },
  );
  after(async () => {
    await wb?.stop();
    ws.cleanup();
    home.cleanup();
  });

  it("the App resource's CSP request names the public origin (frame + http/wss connect) and nothing local", async () => {
    const read = await wb.client.readResource({ uri: "ui://ccb/workbench.html" });
    const csp = (
      read.contents[0] as unknown as { _meta: { ui: { csp: { frameDomains: string[]; connectDomains: string[] } } } }
    )._meta.ui.csp;
    assert.deepEqual(csp.frameDomains, [PUBLIC]);
    assert.deepEqual(csp.connectDomains, [PUBLIC, "wss://ccb.example.test"]);
  });

  it("vscode_open's _meta link uses the public origin (a one-time link)", async () => {
    const url = new URL(((await wb.ok("vscode_open"))._meta?.["ccb/workbench"] as { url: string }).url);
    assert.equal(url.origin, PUBLIC);
    assert.match(url.pathname, /^\/ide\/[A-Za-z0-9_-]{32,}\//);
    assert.ok(url.searchParams.get("ccb_ott"));
  });

  it("Host ccb.example.test is accepted, another host refused; the public origin is same-origin on /mcp", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    for (const host of ["ccb.example.test", "ccb.example.test:443", "CCB.example.test"]) {
      assert.equal((await rawRequest(`${wb.serve.base}/healthz`, { headers: { host } })).status, 200, host);
    }
    for (const host of ["other.example.test", "ccb.example.test.evil.com", "ccb.example.test:80"]) {
      assert.equal((await rawRequest(`${wb.serve.base}/healthz`, { headers: { host } })).status, 403, host);
    }
    const fromPublic = await rawRequest(wb.serve.url, {
      method: "POST",
      headers: { ...MCP_POST_HEADERS, ...auth, host: "ccb.example.test", origin: PUBLIC },
      body: INITIALIZE,
    });
    assert.equal(fromPublic.status, 200);
    const foreign = await rawRequest(wb.serve.url, {
      method: "POST",
      headers: { ...MCP_POST_HEADERS, ...auth, host: "ccb.example.test", origin: "https://evil.example.test" },
      body: INITIALIZE,
    });
    assert.equal(foreign.status, 403);
  });
});

describe("--public-url start-up rules", { timeout: 120_000 }, () => {
  const dir = tmpdirFixture();
  after(() => dir.cleanup());
  const start = async (args: string[], env: Record<string, string> = {}) => {
    const child = spawnCcb(["serve", "--no-workbench", "--http", "--port", "0", "--workspace", dir.path, ...args], {
      env: cleanEnv(env),
    });
    let err = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
    const exit = await waitExit(child);
    return { code: exit.code, err };
  };

  it("http://x on a non-loopback origin is refused at start-up", async () => {
    const r = await start(["--public-url", "http://x"], { CCB_AUTH_TOKEN: TOKEN });
    assert.equal(r.code, 1);
    assert.match(r.err, /must be https/);
  });

  it("a non-loopback public URL needs the token; --trust-proxy needs an https public URL", async () => {
    const noToken = await start([], { CCB_PUBLIC_URL: PUBLIC });
    assert.equal(noToken.code, 1);
    assert.match(noToken.err, /without a bearer token/);
    const proxyHttp = await start(["--host", "0.0.0.0", "--trust-proxy", "--public-url", "http://127.0.0.1:9"], {
      CCB_AUTH_TOKEN: TOKEN,
    });
    assert.equal(proxyHttp.code, 1);
    assert.match(proxyHttp.err, /--trust-proxy needs an https --public-url/);
  });
});
