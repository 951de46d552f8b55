import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import type { WebSocket } from "ws";
import { type Core, createCore } from "../../src/core/core.ts";
import { silentLogger } from "../../src/core/log.ts";
import { type LinkServer, startLinkServer } from "../../src/link/server.ts";
import type { RouteDescription } from "../../src/net/gateway.ts";
import { renderRouteTable } from "../../src/net/route-table.ts";
import { type SocketServer, startSocketServer } from "../../src/protocols/ide/server.ts";
import { type ServeHandle, startServe } from "../../src/protocols/mcp/index.ts";
import { type StreamHandle, startStream } from "../../src/stream/index.ts";
import { newToken } from "../../src/util/secrets.ts";
import { type HeldWorkbench, startOwner } from "../../src/workbench/share/owner.ts";
import { shareKey } from "../../src/workbench/share/record.ts";
import { repoRoot } from "../helpers/cli.ts";
import { generate, type ListenerUnderTest, type MatrixCase, oversizeFrame, send } from "../helpers/edge-matrix.ts";
import { type AuthServer, startAuthServer } from "../helpers/oidc.ts";
import { INITIALIZE, MCP_POST_HEADERS } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * One matrix, generated from the policies every listener declares (Gateway.routes()), run against
 * the real listeners on real sockets: `serve --http` with its workbench routes (/mcp, /healthz,
 * /ide/<key>, /app, /session.json, /bridge, /stream), the IDE socket of `ccb ide`, `ccb link` and
 * `ccb stream` (real headless Chromium). Each route gets positive controls and the attacks its
 * policy must stop: hostile Host names, a foreign Origin, a missing or wrong token in each place it
 * may travel, a token in the query, an oversized body or frame.
 */
const ws = tmpdirFixture({ prefix: "ccb-edge-" });
const sharedWs = tmpdirFixture({ prefix: "ccb-edge-shared-" });
const sharedState = tmpdirFixture({ prefix: "ccb-edge-state-" });
const TOKEN = newToken(32);
const listeners: ListenerUnderTest[] = [];
let serve: ServeHandle;
let oauthServe: ServeHandle | undefined;
let authServer: AuthServer | undefined;
let ide: SocketServer;
let link: LinkServer;
let stream: StreamHandle;
let sharedCore: Core;
let shared: HeldWorkbench | undefined;
const cases: MatrixCase[] = [];
const isRoot = process.getuid?.() === 0;

before(
  async () => {
    serve = await startServe({
      roots: [ws.path],
      stdio: false,
      http: { host: "127.0.0.1", port: 0, authToken: TOKEN, maxBodyBytes: 65_536 },
      // A runtime that is not installed: every workbench route is mounted (and answers 503 past the edge).
      workbench: {
        runtime: "openvscode",
        runtimeRoot: "/nonexistent-runtime",
        headlessClient: false,
        renderMode: "stream",
      },
    });
    const mcpHeaders = (r: RouteDescription) =>
      r.prefix === "/mcp" ? { ...MCP_POST_HEADERS } : ({} as Record<string, string>);
    listeners.push({
      name: "serve --http",
      gateway: serve.http!.gateway,
      body: () => INITIALIZE,
      headers: mcpHeaders,
      noFrames: ["/stream"],
    });

    // serve --http as an OAuth resource server of a real authorization server: the same attacks
    // with an access token as the credential (its metadata documents are open routes).
    authServer = await startAuthServer();
    oauthServe = await startServe({
      roots: [ws.path],
      stdio: false,
      http: { host: "127.0.0.1", port: 0, maxBodyBytes: 65_536, oauth: { issuers: [authServer.issuer] } },
    });
    const oauthUrl = `${oauthServe.http!.url}/mcp`;
    listeners.push({
      name: "serve --http (OAuth)",
      gateway: oauthServe.http!.gateway,
      body: () => INITIALIZE,
      headers: mcpHeaders,
      accessToken: () => authServer!.clientCredentials(authServer!.clients.rw, oauthUrl),
    });

    ide = await startSocketServer({
      authToken: TOKEN,
      log: silentLogger,
      maxPayloadBytes: 256 * 1024,
      onConnection: (s: WebSocket) => s.on("message", () => undefined),
    });
    listeners.push({ name: "ccb ide socket", gateway: ide.gateway });

    link = await startLinkServer({
      host: "127.0.0.1",
      port: 0,
      token: TOKEN,
      allowOrigins: [],
      tls: undefined,
      agent: () => ({ command: process.execPath, args: [`${repoRoot}test/fixtures/echo-agent.mjs`] }),
      localMode: "default",
      maxMessageBytes: 256 * 1024,
      log: silentLogger,
    });
    listeners.push({
      name: "ccb link",
      gateway: link.gateway,
      // `/acp` over Streamable HTTP: a POST carries one JSON-RPC message, the first an initialize.
      body: (r) =>
        r.kind === "http" && r.prefix === "/acp"
          ? JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } })
          : undefined,
      headers: (r) =>
        r.kind === "http" && r.prefix === "/acp"
          ? { "content-type": "application/json" }
          : ({} as Record<string, string>),
    });

    stream = await startStream({
      url: "about:blank",
      host: "127.0.0.1",
      port: 0,
      width: 640,
      height: 400,
      maxFps: 5,
      quality: 50,
      noSandbox: isRoot,
      token: TOKEN.slice(0, 40),
      log: silentLogger,
    });
    listeners.push({ name: "ccb stream", gateway: stream.gateway });

    // The gateway of a shared workbench's owner: /workbench/attach besides the workbench routes.
    sharedCore = createCore({ roots: [sharedWs.path], log: silentLogger });
    // The host (`ccb workbench host`) runs exactly this in its own process; here it runs in-process
    // so that the matrix can list the gateway's routes.
    shared = await startOwner(
      {
        core: sharedCore,
        editor: sharedCore.claimEditor("the workbench host"),
        log: silentLogger,
        owner: "host",
        startedBy: "serve",
        options: { runtime: "openvscode", runtimeRoot: "/nonexistent-runtime", headlessClient: false },
        env: { ...process.env, XDG_STATE_HOME: sharedState.path },
      },
      shareKey(sharedCore.workspace.roots),
    );
    listeners.push({ name: "shared workbench owner", gateway: shared.http!.gateway });

    for (const l of listeners) cases.push(...(await generate(l)));
  },
  { timeout: 120_000 },
);

after(async () => {
  await shared?.close();
  await sharedCore?.dispose();
  sharedWs.cleanup();
  sharedState.cleanup();
  await stream?.close();
  await link?.close();
  await oauthServe?.close();
  await authServer?.close();
  await ide?.close();
  await serve?.close();
  ws.cleanup();
});

describe("edge matrix (generated from the declared policies)", { timeout: 600_000 }, () => {
  it("covers every listener and every route it serves", () => {
    const routes = new Set(cases.map((c) => `${c.listener} ${c.route}`));
    for (const must of ["/mcp", "/healthz", "/ide/<key>", "/app", "/session.json", "/bridge", "/stream"]) {
      assert.ok(
        [...routes].some((r) => r.startsWith("serve --http") && r.includes(` ${must} `)),
        `serve --http ${must} is in the matrix`,
      );
    }
    for (const must of ["/mcp", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"])
      assert.ok(
        [...routes].some((r) => r.startsWith("serve --http (OAuth)") && r.includes(` ${must} `)),
        `serve --http (OAuth) ${must} is in the matrix`,
      );
    for (const l of ["ccb ide socket", "ccb link", "ccb stream"])
      assert.ok(
        [...routes].some((r) => r.startsWith(l)),
        l,
      );
    for (const must of ["/workbench/attach", "/bridge"]) {
      assert.ok(
        [...routes].some((r) => r.startsWith("shared workbench owner") && r.includes(` ${must} `)),
        `shared workbench owner ${must} is in the matrix`,
      );
    }
    for (const l of listeners) {
      for (const r of l.gateway.routes()) {
        if (r.policy.origin.kind === "any")
          assert.ok(
            r.policy.auth.some((c) => c.expected() !== undefined),
            `${l.name} ${r.prefix}: any origin only with a token`,
          );
      }
    }
    console.error(`edge matrix: ${cases.length} cases over ${routes.size} routes of ${listeners.length} listeners`);
  });

  it("ARCHITECTURE.md's route table of each listener is the one it serves (UPDATE_ROUTES=1 rewrites them)", () => {
    const file = `${repoRoot}ARCHITECTURE.md`;
    const text = readFileSync(file, "utf8");
    const [begin, end] = [
      "<!-- route tables: generated by test/e2e/edge-matrix.test.ts -->",
      "<!-- end of route tables -->",
    ];
    const from = text.indexOf(begin);
    const to = text.indexOf(end);
    assert.ok(from >= 0 && to > from, `ARCHITECTURE.md has the markers ${begin} … ${end}`);
    const tables = listeners
      .map(
        (l) =>
          `#### ${l.name}\n\n${renderRouteTable(l.gateway.routes(), (p) => p.replace(/^\/ide\/[^/]+/, "/ide/<key>"))}`,
      )
      .join("\n\n");
    // Cells compared trimmed: the formatter pads Markdown tables.
    const cells = (md: string) =>
      md
        .split("\n")
        .map((line) =>
          line.startsWith("|")
            ? line
                .split("|")
                .map((c) => (/^ *-+ *$/.test(c) ? "---" : c.trim()))
                .join("|")
            : line.trim(),
        )
        .filter(Boolean)
        .join("\n");
    const current = text.slice(from + begin.length, to);
    if (process.env.UPDATE_ROUTES)
      writeFileSync(file, `${text.slice(0, from + begin.length)}\n\n${tables}\n\n${text.slice(to)}`);
    else
      assert.equal(
        cells(current),
        cells(tables),
        "the listeners' routes changed: UPDATE_ROUTES=1 node scripts/test.mjs edge-matrix, then npm run format",
      );
    // the control: a route the table does not have is told apart
    assert.notEqual(cells(current), cells(`${tables}\n| \`/extra\` | GET | open | same origin | x |`));
  });

  it("every case holds (positive controls pass, attacks are refused before the handler)", async () => {
    const failures: string[] = [];
    const tally = { passes: 0, refused: 0, frames: 0 };
    for (const c of cases) {
      const l = listeners.find((x) => x.name === c.listener)!;
      const port = l.gateway.port;
      if ("frameClose" in c.expect) {
        const max = l.gateway.routes().find((r) => c.route.includes(`[${r.policy.name}]`))?.policy.maxFrameBytes ?? 0;
        const code = await oversizeFrame(port, c.probe, max).catch((e: Error) => -1 * e.message.length);
        if (code !== 1009) failures.push(`${c.listener} ${c.route}: ${c.name}: closed with ${code}, want 1009`);
        tally.frames++;
        continue;
      }
      const r = await send(port, c.probe);
      if ("passes" in c.expect) {
        if ([400, 401, 403, 413].includes(r.status))
          failures.push(`${c.listener} ${c.route}: ${c.name}: refused ${r.status} ${r.body.slice(0, 120)}`);
        tally.passes++;
      } else {
        const want = ([] as number[]).concat(c.expect.refused);
        if (!want.includes(r.status))
          failures.push(`${c.listener} ${c.route}: ${c.name}: got ${r.status}, want ${c.expect.refused}`);
        tally.refused++;
      }
    }
    console.error(
      `edge matrix: ${tally.passes} positive controls, ${tally.refused} attacks, ${tally.frames} oversized frames; ${failures.length} failures`,
    );
    assert.deepEqual(failures, []);
  });

  it("the positive controls really reach the handlers (the matrix can pass and fail)", async () => {
    const mcp = cases.find(
      (c) => c.listener === "serve --http" && c.route.includes(" /mcp ") && c.name.startsWith("positive control: own"),
    )!;
    const ok = await send(serve.http!.gateway.port, mcp.probe);
    assert.equal(ok.status, 200, "initialize with the token opens a session");
    const wb = cases.find(
      (c) =>
        c.listener === "serve --http" &&
        c.route.startsWith("http GET /ide/<key>") &&
        c.name.startsWith("positive control: own"),
    );
    assert.ok(wb);
    assert.equal(
      (await send(serve.http!.gateway.port, wb.probe)).status,
      503,
      "past the edge, the proxy says the workbench is not running",
    );
  });
});
