// ccb acp benchmarks: (1) overhead from the fake API's first SSE content byte to the client's first
// agent_message_chunk (target <= 5 ms p50), against a baseline of the Anthropic SDK alone in this
// process; (2) start-up to `initialize` answered, Node and the compiled binary (dist/ccb), against
// a bare `node -e` start; (3) idle RSS after initialize + session/new, against an idle bare node.
// (4) incoming framing: ccb's bounded NDJSON framing (64 MiB cap, survives oversized frames) against
// the SDK's ndJsonStream, on the same small frames and on one 40 MB prompt frame.
// Run: node --import tsx bench/acp.bench.ts   (builds dist/node first if missing; compiles dist/ccb if missing)
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import * as acpu from "@agentclientprotocol/sdk/unstable";
import Anthropic from "@anthropic-ai/sdk";
import { silentLogger } from "../src/core/log.ts";
import { boundedNdJsonStream } from "../src/protocols/acp/framing.ts";
import { createAcpAgent } from "../src/protocols/acp/v1.ts";
import { startFakeAnthropic } from "../test/helpers/fake-anthropic.ts";
import { fmt, ratio, summarize } from "./lib.ts";

const root = new URL("..", import.meta.url).pathname;
const N = Number(process.env.BENCH_N ?? 40);
const STARTS = Number(process.env.BENCH_STARTS ?? 8);
const data = mkdtempSync(join(tmpdir(), "ccb-acp-bench-"));

if (!existsSync(join(root, "dist/node/main.mjs")))
  spawnSync(process.execPath, [join(root, "scripts/build.mjs")], { stdio: "inherit" });
const binary = join(root, "dist/ccb");
if (!existsSync(binary) && !process.env.BENCH_SKIP_BINARY)
  spawnSync(process.execPath, [join(root, "scripts/compile.mjs")], { stdio: "inherit", cwd: root });

const api = await startFakeAnthropic({ script: () => ({ text: "benchmark reply text, streamed in several chunks" }) });
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: data,
  CCB_DATA_DIR: data,
  XDG_CONFIG_HOME: join(data, "cfg"),
  ANTHROPIC_BASE_URL: api.url,
  ANTHROPIC_API_KEY: "sk-ant-bench",
  CCB_LOG_LEVEL: "error",
};

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? NaN);
}

function spawnAgent(command: string, args: string[]) {
  const child = spawn(command, args, { env, stdio: ["pipe", "pipe", "inherit"] });
  let onFirst: ((t: number) => void) | undefined;
  let onRaw: ((t: number) => void) | undefined;
  // the moment the frame leaves the agent (its bytes reach our end of the pipe), before any client parsing
  const tap = new PassThrough();
  child.stdout.on("data", (d: Buffer) => {
    if (onRaw && d.includes("agent_message_chunk")) {
      const f = onRaw;
      onRaw = undefined;
      f(performance.now());
    }
    tap.write(d);
  });
  child.stdout.on("end", () => tap.end());
  const app = acp.client({ name: "bench" }).onNotification(acp.methods.client.session.update, ({ params }) => {
    if (params.update.sessionUpdate === "agent_message_chunk" && onFirst) {
      const f = onFirst;
      onFirst = undefined;
      f(performance.now());
    }
  });
  const conn = app.connect(
    acp.ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(tap) as ReadableStream<Uint8Array>,
    ),
  );
  return {
    child,
    conn,
    firstChunk: () => new Promise<number>((r) => (onFirst = r)),
    firstRaw: () => new Promise<number>((r) => (onRaw = r)),
    async stop() {
      conn.close();
      child.stdin.end();
      if (child.exitCode === null) await new Promise((r) => child.once("exit", r));
    },
  };
}

// 1. first SSE byte -> first agent_message_chunk
async function overhead(): Promise<{ agent: number[]; raw: number[]; sdk: number[]; floor: number[] }> {
  const a = spawnAgent(process.execPath, [join(root, "bin/ccb.mjs"), "acp"]);
  await a.conn.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
  });
  const { sessionId } = await a.conn.agent.request(acp.methods.agent.session.new, { cwd: data, mcpServers: [] });
  const agent: number[] = [];
  const raw: number[] = [];
  for (let i = 0; i < N + 3; i++) {
    const n = api.requests.length + 1;
    const first = a.firstChunk();
    const firstRaw = a.firstRaw();
    const done = a.conn.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: `bench ${i}` }],
    });
    const [tByte, tRaw, tChunk] = await Promise.all([api.waitForFirstByte(n), firstRaw, first]);
    await done;
    if (i >= 3) {
      agent.push(tChunk - tByte); // warm-up excluded
      raw.push(tRaw - tByte);
    }
  }
  await a.stop();
  // baseline: the Anthropic SDK alone, in this process
  const client = new Anthropic({ apiKey: "sk-ant-bench", baseURL: api.url, maxRetries: 0 });
  const sdk: number[] = [];
  for (let i = 0; i < N + 3; i++) {
    const n = api.requests.length + 1;
    const stream = await client.messages.create({
      model: "m",
      max_tokens: 10,
      stream: true,
      messages: [{ role: "user", content: "x" }],
      tools: [{ name: "t", input_schema: { type: "object" } }],
    });
    let tText = 0;
    for await (const e of stream) if (!tText && e.type === "content_block_delta") tText = performance.now();
    const tByte = await api.waitForFirstByte(n);
    if (i >= 3) sdk.push(tText - tByte);
  }
  // floor: a bare relay process (fetch + write one line to stdout) = the cost of crossing two processes
  const relaySrc = `
    const rl = require("node:readline").createInterface({ input: process.stdin });
    rl.on("line", async (url) => {
      const res = await fetch(url + "/v1/messages", { method: "POST", body: JSON.stringify({ model: "m", stream: true, tools: [{ name: "t" }], messages: [] }) });
      let sent = false;
      for await (const chunk of res.body) {
        if (!sent && Buffer.from(chunk).toString().includes("content_block_delta")) { sent = true; process.stdout.write("chunk\\n"); }
      }
    });`;
  const relay = spawn(process.execPath, ["-e", relaySrc], { stdio: ["pipe", "pipe", "inherit"] });
  const floor: number[] = [];
  for (let i = 0; i < N + 3; i++) {
    const n = api.requests.length + 1;
    const got = new Promise<number>((r) => relay.stdout.once("data", () => r(performance.now())));
    relay.stdin.write(`${api.url}\n`);
    const [tByte, tLine] = await Promise.all([api.waitForFirstByte(n), got]);
    if (i >= 3) floor.push(tLine - tByte);
  }
  relay.kill();
  return { agent, raw, sdk, floor };
}

// 1a. with BENCH_BASELINE_AGENT=<another checkout>/bin/ccb.mjs: this agent and that one, prompts
// interleaved in one run (same machine load), first SSE byte -> first agent_message_chunk
async function againstBaseline(other: string): Promise<{ ours: number[]; theirs: number[] }> {
  const agents = [
    spawnAgent(process.execPath, [join(root, "bin/ccb.mjs"), "acp"]),
    spawnAgent(process.execPath, [other, "acp"]),
  ];
  const ids: string[] = [];
  for (const a of agents) {
    await a.conn.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    ids.push((await a.conn.agent.request(acp.methods.agent.session.new, { cwd: data, mcpServers: [] })).sessionId);
  }
  const out = { ours: [] as number[], theirs: [] as number[] };
  for (let i = 0; i < N + 3; i++) {
    for (const [k, a] of agents.entries()) {
      const n = api.requests.length + 1;
      const first = a.firstChunk();
      const done = a.conn.agent.request(acp.methods.agent.session.prompt, {
        sessionId: ids[k]!,
        prompt: [{ type: "text", text: `baseline ${i}` }],
      });
      const [tByte, tChunk] = await Promise.all([api.waitForFirstByte(n), first]);
      await done;
      if (i >= 3) (k === 0 ? out.ours : out.theirs).push(tChunk - tByte);
    }
  }
  for (const a of agents) await a.stop();
  return out;
}

// 1b. the same, with the agent in this process (no pipes): the agent's own logic
async function inProcess(): Promise<number[]> {
  Object.assign(process.env, { ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: "sk-ant-bench" });
  const agent = createAcpAgent({ env: { home: data, dataDir: data, configDir: undefined }, log: silentLogger });
  let onFirst: ((t: number) => void) | undefined;
  const client = acpu.client({ name: "bench" }).onNotification(acpu.methods.client.session.update, ({ params }) => {
    if (params.update.sessionUpdate === "agent_message_chunk" && onFirst) {
      const f = onFirst;
      onFirst = undefined;
      f(performance.now());
    }
  });
  const xs: number[] = [];
  await client.connectWith(agent, async (ctx) => {
    await ctx.request(acpu.methods.agent.initialize, {
      protocolVersion: acpu.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    const { sessionId } = await ctx.request(acpu.methods.agent.session.new, { cwd: data, mcpServers: [] });
    for (let i = 0; i < N + 3; i++) {
      const n = api.requests.length + 1;
      const first = new Promise<number>((r) => (onFirst = r));
      const done = ctx.request(acpu.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: `in-process ${i}` }],
      });
      const [tByte, tChunk] = await Promise.all([api.waitForFirstByte(n), first]);
      await done;
      if (i >= 3) xs.push(tChunk - tByte);
    }
  });
  return xs;
}

// 4. incoming framing: time to read `frames` through a framing layer (ms per run)
async function framing(
  make: (out: WritableStream<Uint8Array>, input: ReadableStream<Uint8Array>) => { readable: ReadableStream<unknown> },
  frames: Uint8Array[],
): Promise<number> {
  const input = new ReadableStream<Uint8Array>({
    start(c) {
      for (const f of frames) c.enqueue(f);
      c.close();
    },
  });
  const sink = new WritableStream<Uint8Array>();
  const t0 = performance.now();
  const reader = make(sink, input).readable.getReader();
  while (!(await reader.read()).done);
  return performance.now() - t0;
}

async function framingBench(): Promise<{
  smallOurs: number[];
  smallSdk: number[];
  bigOurs: number[];
  bigSdk: number[];
}> {
  const enc = new TextEncoder();
  const line = (i: number) =>
    `${JSON.stringify({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `chunk ${i}` } } } })}\n`;
  // 64 KiB reads, as a pipe delivers them
  const small = enc.encode(Array.from({ length: 10_000 }, (_, i) => line(i)).join(""));
  const big = enc.encode(
    `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/prompt", params: { sessionId: "s", prompt: [{ type: "text", text: "x".repeat(40_000_000) }] } })}\n`,
  );
  const split = (b: Uint8Array) =>
    Array.from({ length: Math.ceil(b.byteLength / 65536) }, (_, i) => b.slice(i * 65536, (i + 1) * 65536));
  const [smallFrames, bigFrames] = [split(small), split(big)];
  const ours = (o: WritableStream<Uint8Array>, i: ReadableStream<Uint8Array>) => boundedNdJsonStream(o, i);
  const sdk = (o: WritableStream<Uint8Array>, i: ReadableStream<Uint8Array>) =>
    acpu.ndJsonStream(o, i, { maxMessageBytes: 64 * 1024 * 1024 });
  const out = { smallOurs: [] as number[], smallSdk: [] as number[], bigOurs: [] as number[], bigSdk: [] as number[] };
  for (let i = 0; i < 6; i++) {
    out.smallOurs.push(await framing(ours, smallFrames));
    out.smallSdk.push(await framing(sdk, smallFrames));
    out.bigOurs.push(await framing(ours, bigFrames));
    out.bigSdk.push(await framing(sdk, bigFrames));
  }
  return out;
}

// 2 + 3. start-up to initialize answered, idle RSS
async function startup(command: string, args: string[]): Promise<{ ms: number[]; rss: number[] }> {
  const ms: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const t0 = performance.now();
    const a = spawnAgent(command, args);
    await a.conn.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    ms.push(performance.now() - t0);
    await a.conn.agent.request(acp.methods.agent.session.new, { cwd: data, mcpServers: [] });
    rss.push(rssKb(a.child.pid!));
    await a.stop();
  }
  return { ms, rss };
}

async function bareNode(): Promise<{ ms: number[]; rss: number[] }> {
  const ms: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const t0 = performance.now();
    const c = spawn(process.execPath, ["-e", "process.stdout.write('x'); setInterval(() => {}, 1000)"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise((r) => c.stdout.once("data", r));
    ms.push(performance.now() - t0);
    rss.push(rssKb(c.pid!));
    c.kill();
    await new Promise((r) => c.once("exit", r));
  }
  return { ms, rss };
}

try {
  const o = await overhead();
  const ag = summarize(o.agent);
  const sd = summarize(o.sdk);
  const fl = summarize(o.floor);
  const rw = summarize(o.raw);
  console.log(
    `first SSE byte -> first agent_message_chunk (n=${ag.n}): p50 ${fmt(ag.p50)} p99 ${fmt(ag.p99)} | SDK alone in-process p50 ${fmt(sd.p50)} p99 ${fmt(sd.p99)} | bare relay process (floor) p50 ${fmt(fl.p50)} p99 ${fmt(fl.p99)} | ratio vs floor p50 ${ratio(ag.p50, fl.p50)} p99 ${ratio(ag.p99, fl.p99)} | target <= 5 ms p50: ${ag.p50 <= 5 ? "met" : "NOT met"}`,
  );
  console.log(
    `  of which: first SSE byte -> the frame's bytes on the agent's stdout pipe (n=${rw.n}): p50 ${fmt(rw.p50)} p99 ${fmt(rw.p99)} | ratio vs floor p50 ${ratio(rw.p50, fl.p50)}`,
  );
  const other = process.env.BENCH_BASELINE_AGENT;
  if (other) {
    const b = await againstBaseline(other);
    const [us, them] = [summarize(b.ours), summarize(b.theirs)];
    console.log(
      `  interleaved against ${other} (n=${us.n}): this p50 ${fmt(us.p50)} p99 ${fmt(us.p99)} | baseline p50 ${fmt(them.p50)} p99 ${fmt(them.p99)} | ratio p50 ${ratio(us.p50, them.p50)}`,
    );
  }
  const ip = summarize(await inProcess());
  console.log(
    `  same, agent in-process (its own logic, no process hops) (n=${ip.n}): p50 ${fmt(ip.p50)} p99 ${fmt(ip.p99)} | ratio vs SDK alone p50 ${ratio(ip.p50, sd.p50)}`,
  );
  const fr = await framingBench();
  const [so, ss, bo, bsdk] = [
    summarize(fr.smallOurs),
    summarize(fr.smallSdk),
    summarize(fr.bigOurs),
    summarize(fr.bigSdk),
  ];
  console.log(
    `incoming framing, 10,000 small frames: bounded p50 ${fmt(so.p50)} | SDK ndJsonStream p50 ${fmt(ss.p50)} | ratio ${ratio(so.p50, ss.p50)}; one 40 MB frame: bounded p50 ${fmt(bo.p50)} | SDK p50 ${fmt(bsdk.p50)} | ratio ${ratio(bo.p50, bsdk.p50)}`,
  );
  const base = await bareNode();
  const bs = summarize(base.ms);
  const node = await startup(process.execPath, [join(root, "bin/ccb.mjs"), "acp"]);
  const ns = summarize(node.ms);
  const nodeRss = summarize(node.rss);
  console.log(
    `start-up to initialize answered, Node (n=${ns.n}): p50 ${fmt(ns.p50)} p99 ${fmt(ns.p99)} | bare node start p50 ${fmt(bs.p50)} | ratio ${ratio(ns.p50, bs.p50)}`,
  );
  let bin: { ms: number[]; rss: number[] } | undefined;
  if (existsSync(binary)) {
    bin = await startup(binary, ["acp"]);
    const b = summarize(bin.ms);
    console.log(
      `start-up to initialize answered, compiled dist/ccb (n=${b.n}): p50 ${fmt(b.p50)} p99 ${fmt(b.p99)} | ratio vs bare node ${ratio(b.p50, bs.p50)}`,
    );
  }
  const baseRss = summarize(base.rss);
  console.log(
    `idle RSS after initialize + session/new: Node ${(nodeRss.p50 / 1024).toFixed(1)} MiB${bin ? `, dist/ccb ${(summarize(bin.rss).p50 / 1024).toFixed(1)} MiB` : ""} | bare node ${(baseRss.p50 / 1024).toFixed(1)} MiB | ratio ${ratio(nodeRss.p50, baseRss.p50)}`,
  );
  console.log(
    JSON.stringify({
      bench: "acp",
      firstChunkOverheadMs: {
        p50: ag.p50,
        p99: ag.p99,
        sdkP50: sd.p50,
        sdkP99: sd.p99,
        relayFloorP50: fl.p50,
        relayFloorP99: fl.p99,
        inProcessP50: ip.p50,
        inProcessP99: ip.p99,
        stdoutFrameP50: rw.p50,
        stdoutFrameP99: rw.p99,
      },
      framingMs: { small10kOursP50: so.p50, small10kSdkP50: ss.p50, big40MbOursP50: bo.p50, big40MbSdkP50: bsdk.p50 },
      startupMs: {
        nodeP50: ns.p50,
        nodeP99: ns.p99,
        binaryP50: bin ? summarize(bin.ms).p50 : null,
        bareNodeP50: bs.p50,
      },
      idleRssMiB: {
        node: nodeRss.p50 / 1024,
        binary: bin ? summarize(bin.rss).p50 / 1024 : null,
        bareNode: baseRss.p50 / 1024,
      },
    }),
  );
} finally {
  await api.close();
  rmSync(data, { recursive: true, force: true });
}
