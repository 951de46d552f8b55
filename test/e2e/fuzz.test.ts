import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { describe, it } from "node:test";
import fc from "fast-check";
import { spawnCcb } from "../helpers/cli.ts";
import {
  cleanEnv,
  connectHttp,
  httpServeFixture,
  INITIALIZE,
  MCP_POST_HEADERS,
  rawRequest,
  waitExit,
} from "../helpers/serve.ts";

/**
 * Malformed-frame fuzzing (fast-check): garbage bytes, wrong types, huge ids, nested junk, junk
 * params on real methods. After every batch the server must still answer a valid tools/list.
 * Tool names are never generated from the real list, so fuzzing cannot start terminals.
 */

const SEED = Number(process.env.CCB_FUZZ_SEED ?? 20261130);
const RUNS = 60;

const hugeNumber = fc.oneof(
  fc.constant(1e308),
  fc.constant(-1e308),
  fc.constant(2 ** 64),
  fc.constant(-0),
  fc.constant(0.5),
  fc.double({ noNaN: true }),
  fc.integer(),
);
const junkId = fc.oneof(
  hugeNumber,
  fc.string({ maxLength: 40 }),
  fc.constant(null),
  fc.constant(true),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.object({ maxDepth: 1 }),
  fc.string({ minLength: 2000, maxLength: 4000 }),
);
const { tree: nested } = fc.letrec((tie) => ({
  tree: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }),
    fc.array(tie("tree"), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 8 }), tie("tree"), { maxKeys: 3 }),
  ),
}));
const realMethod = fc.constantFrom(
  "initialize",
  "tools/list",
  "tools/call",
  "ping",
  "notifications/cancelled",
  "notifications/initialized",
  "logging/setLevel",
  "resources/list",
  "completion/complete",
);
const method = fc.oneof(realMethod, fc.string({ maxLength: 30 }), hugeNumber, fc.constant(null), nested);
const params = fc.oneof(
  nested,
  fc.record(
    {
      name: fc.oneof(
        fc.string({ maxLength: 20 }).map((s) => `fuzz_${s}`),
        hugeNumber,
        nested,
      ),
      arguments: nested,
    },
    { requiredKeys: [] },
  ),
  fc.record(
    { protocolVersion: fc.oneof(fc.string(), hugeNumber), capabilities: nested, clientInfo: nested },
    { requiredKeys: [] },
  ),
  fc.record({ requestId: junkId, reason: nested }, { requiredKeys: [] }),
);
const messageish = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant("2.0"), fc.constant("1.0"), fc.constant(2), nested),
    id: junkId,
    method,
    params,
    result: nested,
    error: nested,
  },
  { requiredKeys: [] },
);
/** One frame as bytes (never containing a newline; the caller adds it). */
const frame: fc.Arbitrary<Buffer> = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b.filter((x) => x !== 0x0a))),
  fc.string({ unit: "binary", maxLength: 200 }).map((s) => Buffer.from(s.replace(/\n/g, ""), "utf8")),
  messageish.map((m) => Buffer.from(JSON.stringify(m), "utf8")),
  nested.map((v) => Buffer.from(JSON.stringify(v) ?? "undefined", "utf8")),
  fc.array(messageish, { maxLength: 4 }).map((a) => Buffer.from(JSON.stringify(a), "utf8")),
  messageish.map((m) => Buffer.from(JSON.stringify(m).slice(0, -1), "utf8")),
  fc
    .constantFrom(
      "{",
      "[",
      "]",
      "}",
      '"',
      "null",
      "{}",
      "[]",
      '{"jsonrpc":"2.0"}',
      '{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
      "\r",
      "\u2028",
    )
    .map((s) => Buffer.from(s)),
);
const batch = fc.array(frame, { minLength: 1, maxLength: 20 });

class StdioPeer {
  readonly child: ChildProcess;
  #buf = "";
  readonly #seen = new Map<string, unknown>();
  readonly #waiters = new Map<string, () => void>();
  badLines: string[] = [];

  constructor(workspace: string) {
    this.child = spawnCcb(["serve", "--no-workbench", "--stdio", "--workspace", workspace], { env: cleanEnv() });
    this.child.stderr!.resume();
    this.child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      this.#buf += d;
      let nl: number;
      while ((nl = this.#buf.indexOf("\n")) !== -1) {
        const line = this.#buf.slice(0, nl);
        this.#buf = this.#buf.slice(nl + 1);
        let msg: { jsonrpc?: string; id?: unknown };
        try {
          msg = JSON.parse(line) as { jsonrpc?: string; id?: unknown };
        } catch {
          this.badLines.push(line);
          continue;
        }
        if (msg.jsonrpc !== "2.0") this.badLines.push(line);
        if (typeof msg.id === "string" && msg.id.startsWith("probe-")) {
          this.#seen.set(msg.id, msg);
          this.#waiters.get(msg.id)?.();
        }
      }
    });
  }

  write(data: Buffer | string): void {
    this.child.stdin!.write(data);
  }

  /** Send a valid tools/list and wait for its answer. */
  async probe(n: number): Promise<{ result?: { tools: unknown[] }; error?: unknown }> {
    const id = `probe-${n}`;
    const answered = new Promise<void>((resolve) => this.#waiters.set(id, resolve));
    this.write(`${JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list" })}\n`);
    await answered;
    this.#waiters.delete(id);
    return this.#seen.get(id) as { result?: { tools: unknown[] } };
  }
}

describe("fuzz: malformed frames never kill ccb serve", { timeout: 600_000 }, () => {
  const fixture = httpServeFixture();

  it("over stdio", async () => {
    const peer = new StdioPeer(fixture.dir);
    peer.write(`${INITIALIZE}\n${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    let n = 0;
    assert.ok((await peer.probe(n++)).result);
    // one oversized line (over the 4 MiB frame cap), then the server must still answer
    peer.write(`{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"${"x".repeat(5 * 1024 * 1024)}"}}\n`);
    assert.ok((await peer.probe(n++)).result);
    await fc.assert(
      fc.asyncProperty(batch, async (frames) => {
        for (const f of frames) peer.write(Buffer.concat([f, Buffer.from("\n")]));
        const answer = await peer.probe(n++);
        return Array.isArray(answer.result?.tools) && answer.result.tools.length > 0 && peer.child.exitCode === null;
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    assert.deepEqual(peer.badLines, [], "stdout carried only JSON-RPC frames");
    peer.child.stdin!.end();
    assert.deepEqual(await waitExit(peer.child), { code: 0, signal: null });
  });

  it("over Streamable HTTP (with and without a session id)", async () => {
    const client = await connectHttp(fixture.serve.url);
    const init = await rawRequest(fixture.serve.url, { method: "POST", headers: MCP_POST_HEADERS, body: INITIALIZE });
    const sessionId = String(init.headers["mcp-session-id"]);
    await fc.assert(
      fc.asyncProperty(batch, fc.boolean(), async (frames, withSession) => {
        for (const f of frames) {
          const headers: Record<string, string> = {
            ...MCP_POST_HEADERS,
            ...(withSession ? { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" } : {}),
          };
          const r = await rawRequest(fixture.serve.url, { method: "POST", headers, body: f });
          // a malformed request is a 4xx with a JSON-RPC error (or a 2xx for a valid-looking message), never a 5xx
          assert.ok(
            r.status < 500,
            `status ${r.status} for ${f.toString("utf8").slice(0, 200)}: ${r.body.slice(0, 200)}`,
          );
        }
        const { tools } = await client.listTools();
        return tools.length > 0;
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    const health = await rawRequest(`${fixture.serve.base}/healthz`);
    assert.equal(health.status, 200);
    await client.close();
  });
});
