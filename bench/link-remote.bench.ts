// ccb link on ACP's remote transport: the round trip of one JSON-RPC request through `/acp` over
// Streamable HTTP (the SDK's createHttpStream: POST, answer on the SSE stream) and over WebSocket
// (a raw `ws` client), each against the same stdio echo agent, vs a raw `ws` echo server in this
// process as the baseline and link's plain `/ws` relay, all in the same run. Run: node --import tsx bench/link-remote.bench.ts
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import WebSocket, { WebSocketServer } from "ws";
import { repoRoot, spawnCcb } from "../test/helpers/cli.ts";
import { stopProcess, waitForOutput } from "../test/helpers/process.ts";
import { fmt, ratio, summarize } from "./lib.ts";

const N = Number(process.env.BENCH_N ?? 1500);
const WARMUP = 300;
const ROUNDS = 5;
const ECHO = [process.execPath, `${repoRoot}test/fixtures/echo-agent.mjs`];
const TOKEN = "bench-link-remote-token-0123456789";

interface RoundTrip {
  /** Send request `id` and resolve with its answer. */
  call(id: number): Promise<unknown>;
  close(): Promise<void>;
}

const request = (id: number | string, method = "echo") =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params: { i: id } });

async function wsRoundTrip(url: string, headers: Record<string, string>, initialize: boolean): Promise<RoundTrip> {
  const ws = new WebSocket(url, { headers, perMessageDeflate: false });
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  let pending: ((v: unknown) => void) | undefined;
  ws.on("message", (d) => pending?.(JSON.parse(d.toString())));
  const call = (id: number | string, method?: string) =>
    new Promise<unknown>((resolve) => {
      pending = resolve;
      ws.send(request(id, method));
    });
  if (initialize) await call("init", "initialize");
  return {
    call,
    close: async () => {
      ws.close();
    },
  };
}

async function httpRoundTrip(url: string, headers: Record<string, string>): Promise<RoundTrip> {
  const stream = createHttpStream(url, { headers });
  const writer = stream.writable.getWriter();
  const reader = stream.readable.getReader();
  const call = async (id: number | string, method?: string) => {
    await writer.write(JSON.parse(request(id, method)));
    return (await reader.read()).value;
  };
  await call("init", "initialize");
  return {
    call,
    close: async () => {
      await writer.close().catch(() => {});
    },
  };
}

/**
 * The three round trips take turns (ROUNDS rounds of N / ROUNDS calls each, after a warm-up), so
 * that a machine whose load changes during the run weighs on all three alike.
 */
async function measureAll(rts: RoundTrip[]): Promise<ReturnType<typeof summarize>[]> {
  const samples: number[][] = rts.map(() => []);
  let id = 0;
  for (const rt of rts) for (let i = 0; i < WARMUP; i++) await rt.call(id++);
  for (let round = 0; round < ROUNDS; round++)
    for (const [k, rt] of rts.entries())
      for (let i = 0; i < N / ROUNDS; i++) {
        const t0 = performance.now();
        await rt.call(id++);
        samples[k]?.push(performance.now() - t0);
      }
  for (const rt of rts) await rt.close();
  return samples.map(summarize);
}

// Baseline: a raw `ws` echo server (same process, loopback), answering like the echo agent.
const echo = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
echo.on("connection", (s) =>
  s.on("message", (d) => {
    const m = JSON.parse(d.toString()) as { id: unknown; params: unknown };
    s.send(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: m.params }));
  }),
);
await new Promise((r) => echo.once("listening", r));
const echoPort = (echo.address() as { port: number }).port;

const link = spawnCcb(["link", "--port", "0", "--host", "127.0.0.1", "--log-level", "warn", "--", ...ECHO], {
  env: { ...process.env, ACP_AUTH_TOKEN: TOKEN },
});
const m = await waitForOutput(link, /listening on (ws:\/\/\S+) \(WebSocket\) and (http:\/\/\S+)/);
const auth = { authorization: `Bearer ${TOKEN}` };

type Summary = ReturnType<typeof summarize>;
const [baseline, viaWs, viaHttp, viaRelay] = (await measureAll([
  await wsRoundTrip(`ws://127.0.0.1:${echoPort}`, {}, false),
  await wsRoundTrip(m[1] as string, auth, true),
  await httpRoundTrip(m[2] as string, auth),
  await wsRoundTrip((m[1] as string).replace(/\/acp$/, "/ws"), auth, true),
])) as [Summary, Summary, Summary, Summary];
await stopProcess(link);
echo.close();

const row = (name: string, s: ReturnType<typeof summarize>) =>
  console.log(
    `${name.padEnd(34)} p50 ${fmt(s.p50)}  p99 ${fmt(s.p99)}  = ${ratio(s.p50, baseline.p50)} of the raw ws p50`,
  );
console.log(`round trip of one request (n=${N})`);
row("raw ws echo (baseline)", baseline);
row("link /acp WebSocket -> stdio agent", viaWs);
row("link /acp Streamable HTTP -> agent", viaHttp);
row("link /ws plain relay -> agent", viaRelay);
console.log(`/acp WebSocket (SDK) / /ws plain relay: p50 ${ratio(viaWs.p50, viaRelay.p50)}`);
console.log(
  `HTTP / WebSocket through link: p50 ${ratio(viaHttp.p50, viaWs.p50)}, p99 ${ratio(viaHttp.p99, viaWs.p99)}`,
);
console.log(
  JSON.stringify({
    bench: "link-remote",
    baselineP50Ms: +baseline.p50.toFixed(3),
    wsP50Ms: +viaWs.p50.toFixed(3),
    httpP50Ms: +viaHttp.p50.toFixed(3),
    wsVsBaselineP50: +(viaWs.p50 / baseline.p50).toFixed(2),
    httpVsBaselineP50: +(viaHttp.p50 / baseline.p50).toFixed(2),
    httpVsWsP50: +(viaHttp.p50 / viaWs.p50).toFixed(2),
    acpWsVsRelayP50: +(viaWs.p50 / viaRelay.p50).toFixed(2),
  }),
);
