import assert from "node:assert/strict";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { isCcbError } from "../../src/core/errors.ts";
import { searchJs } from "../../src/core/search/js.ts";
import { regexWorkersAlive } from "../../src/core/search/regex-worker.ts";
import { connectHttp, type HttpServe, rawRequest, startHttpServe } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/*
 * A backtracking regular expression must not freeze the server. Without ripgrep on PATH the JS
 * engine runs; `^(a+)+$` on a 37-character `aaaa…!` line takes hours to fail in a backtracking
 * engine. While one client's search runs, another client of the same server (and /healthz) keep
 * being answered; the search itself ends at the matcher's deadline, and a cancelled search
 * terminates its worker thread (the server's thread count returns to where it was).
 */

const LINE = `${"a".repeat(36)}!`;
const QUERY = "^(a+)+$";

function threads(pid: number): number {
  const m = /^Threads:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0);
}

async function waitFor(what: string, cond: () => boolean): Promise<void> {
  // Bounded by the test timeout, not by a timing threshold.
  while (!cond()) await sleep(50);
  assert.ok(cond(), what);
}

describe("fs_search: a catastrophic regex does not stall other clients (JS engine, no rg)", () => {
  const ws = tmpdirFixture({ prefix: "ccb-regex-" });
  const bin = tmpdirFixture({ prefix: "ccb-regex-bin-" });
  let srv: HttpServe;
  let searcher: Client;
  let prober: Client;

  before(async () => {
    writeFileSync(join(ws.path, "a.txt"), `${LINE}\n`);
    mkdirSync(join(ws.path, "src"));
    writeFileSync(join(ws.path, "src", "probe.txt"), "probe me\n");
    // PATH holds git only: no rg, so the server must use its JS engine.
    symlinkSync("/usr/bin/git", join(bin.path, "git"));
    srv = await startHttpServe(ws.path, [], { PATH: bin.path, HOME: ws.path });
    searcher = await connectHttp(srv.url);
    prober = await connectHttp(srv.url);
    const warm = await searcher.callTool({ name: "fs_search", arguments: { query: "probe" } });
    assert.equal(
      (warm.structuredContent as { engine?: string }).engine,
      "js",
      "the server must run the JS engine (no rg on PATH)",
    );
  });
  after(async () => {
    await searcher?.close();
    await prober?.close();
    await srv?.stop();
    ws.cleanup();
    bin.cleanup();
  });

  it("other clients and /healthz are answered while the search runs; the search ends (at its deadline under Node)", async () => {
    let settled = false;
    const search = searcher
      .callTool({ name: "fs_search", arguments: { query: QUERY, regex: true } }, undefined, { timeout: 120_000 })
      .finally(() => {
        settled = true;
      });
    const pid = srv.child.pid as number;
    const base = threads(pid);
    // The worker thread exists: the pattern is being matched now.
    await waitFor("a worker thread starts", () => threads(pid) > base || settled);
    for (let i = 0; i < 5; i++) {
      const r = await prober.callTool({ name: "fs_read", arguments: { path: "src/probe.txt" } });
      assert.match(JSON.stringify(r.content), /probe me/);
      const h = await rawRequest(`${srv.base}/healthz`);
      assert.equal(h.status, 200);
      assert.equal(settled, false, `probe ${i} was answered, and the search is still running`);
    }
    const r = await search;
    // V8 (Node) backtracks for hours: the deadline ends the search. JavaScriptCore (the Bun binary)
    // gives up on its own after a while; then the true answer is "no match".
    if (!process.env.CCB_TEST_BIN)
      assert.equal(r.isError, true, "under Node the pattern never finishes: the deadline must end it");
    if (r.isError) assert.match(JSON.stringify(r.content), /more than \d+ ms/);
    else assert.match(JSON.stringify(r.content), /No matches/);
  });

  it("cancelling the search terminates its worker thread", async () => {
    const pid = srv.child.pid as number;
    const base = threads(pid);
    const ac = new AbortController();
    const search = searcher.callTool({ name: "fs_search", arguments: { query: QUERY, regex: true } }, undefined, {
      signal: ac.signal,
      timeout: 120_000,
    });
    search.catch(() => {});
    await waitFor("a worker thread starts", () => threads(pid) > base);
    // The server is answering while the worker spins.
    const r = await prober.callTool({ name: "fs_list", arguments: { path: "." } });
    assert.equal(r.isError ?? false, false);
    ac.abort();
    await assert.rejects(search);
    await waitFor("the worker thread is gone", () => threads(pid) <= base);
    // And the server still answers.
    const again = await prober.callTool({ name: "fs_search", arguments: { query: "probe" } });
    assert.match(JSON.stringify(again.content), /probe me/);
  });
});

describe("the JS engine's regex worker (in process)", () => {
  const ws = tmpdirFixture({ prefix: "ccb-regex-unit-" });
  const base = {
    rootAbs: ws.path,
    startRel: "",
    startIsFile: false,
    ignoreCase: false,
    include: [],
    exclude: [],
    respectGitignore: true,
    includeHidden: false,
    contextLines: 1,
    limit: 100,
  };
  before(() => {
    writeFileSync(join(ws.path, "a.txt"), `${LINE}\nhello world\nbye\n`);
  });
  after(() => ws.cleanup());

  it("gives the same matches as before (line, column, context) and ends its thread", async () => {
    const r = await searchJs({ ...base, query: "wor+ld", regex: true });
    assert.deepEqual(r.matches, [
      { rel: "a.txt", line: 2, column: 7, text: "hello world", before: [LINE], after: ["bye"] },
    ]);
    assert.equal(regexWorkersAlive(), 0);
  });

  it("the deadline stops a catastrophic pattern with TIMEOUT and ends the thread; the main thread kept running meanwhile", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const err = await searchJs({ ...base, query: QUERY, regex: true, regexDeadlineMs: 300 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    clearInterval(timer);
    assert.ok(isCcbError(err, "TIMEOUT"), String(err));
    assert.ok(ticks > 0, "the event loop ran while the pattern was matched");
    assert.equal(regexWorkersAlive(), 0);
  });

  it("an aborted search rejects ABORTED and ends the thread", async () => {
    const ac = new AbortController();
    const p = searchJs({ ...base, query: QUERY, regex: true, signal: ac.signal });
    await waitFor("the worker started", () => regexWorkersAlive() > 0);
    ac.abort();
    await assert.rejects(p, (e: unknown) => isCcbError(e, "ABORTED"));
    assert.equal(regexWorkersAlive(), 0);
  });
});
