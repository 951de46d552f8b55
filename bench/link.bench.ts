// ccb link: added latency per message and throughput vs talking to the same echo agent over
// stdio directly, in the same run. Run: node --import tsx bench/link.bench.ts
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import WebSocket from "ws";
import { repoRoot, spawnCcb } from "../test/helpers/cli.ts";
import { stopProcess, waitForOutput } from "../test/helpers/process.ts";
import { cpuMsOf, fmt, ratio, summarize } from "./lib.ts";

const ECHO = [`${repoRoot}/test/fixtures/echo-agent.mjs`];
const LAT_N = Number(process.env.BENCH_N ?? 3000);
const TP_N = Number(process.env.BENCH_TP_N ?? 30000);
const IN_FLIGHT = 64;
const PAYLOAD = "x".repeat(1024 - 60);

interface Channel {
  send(text: string): void;
  onMessage(cb: (text: string) => void): void;
  close(): Promise<void>;
}

function directChannel(): Channel {
  const child = spawn(process.execPath, ECHO, { stdio: ["pipe", "pipe", "inherit"] });
  const rl = createInterface({ input: child.stdout });
  return {
    send: (t) => child.stdin.write(`${t}\n`),
    onMessage: (cb) => rl.on("line", cb),
    close: async () => {
      await stopProcess(child);
    },
  };
}

async function linkChannel(): Promise<Channel & { linkPid: number }> {
  const link = spawnCcb([
    "link",
    "--port",
    "0",
    "--host",
    "127.0.0.1",
    "--no-auth",
    "--log-level",
    "warn",
    "--",
    process.execPath,
    ...ECHO,
  ]);
  const m = await waitForOutput(link, /listening on (ws:\/\/[^\s]+)/);
  const ws = new WebSocket(m[1] as string, { perMessageDeflate: false });
  await new Promise((r, j) => {
    ws.on("open", r);
    ws.on("error", j);
  });
  // ACP's first message on /acp is initialize (the echo agent answers it like any request).
  await new Promise((r) => {
    ws.once("message", r);
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: 1 } }));
  });
  return {
    linkPid: link.pid as number,
    send: (t) => ws.send(t),
    onMessage: (cb) => ws.on("message", (d) => cb(d.toString())),
    close: async () => {
      ws.close();
      await stopProcess(link);
    },
  };
}

async function latency(ch: Channel, n: number): Promise<number[]> {
  const samples: number[] = [];
  let resolveOne: (() => void) | undefined;
  ch.onMessage(() => resolveOne?.());
  for (let i = 0; i < n + 300; i++) {
    const t0 = performance.now();
    await new Promise<void>((r) => {
      resolveOne = r;
      ch.send(JSON.stringify({ jsonrpc: "2.0", id: i, method: "echo", params: { i } }));
    });
    if (i >= 300) samples.push(performance.now() - t0);
  }
  return samples;
}

async function throughput(ch: Channel, n: number): Promise<number> {
  let sent = 0;
  let received = 0;
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    ch.onMessage(() => {
      received++;
      if (received === n) resolve();
      else if (sent < n)
        ch.send(JSON.stringify({ jsonrpc: "2.0", id: sent++, method: "echo", params: { p: PAYLOAD } }));
    });
    for (; sent < Math.min(IN_FLIGHT, n); )
      ch.send(JSON.stringify({ jsonrpc: "2.0", id: sent++, method: "echo", params: { p: PAYLOAD } }));
  });
  return n / ((performance.now() - t0) / 1000);
}

const d1 = directChannel();
const directLat = summarize(await latency(d1, LAT_N));
await d1.close();
const d2 = directChannel();
const directTp = await throughput(d2, TP_N);
await d2.close();

const l1 = await linkChannel();
const linkLat = summarize(await latency(l1, LAT_N));
await l1.close();
const l2 = await linkChannel();
const cpu0 = cpuMsOf(l2.linkPid);
const linkTp = await throughput(l2, TP_N);
const cpuPerMsgUs = ((cpuMsOf(l2.linkPid) - cpu0) * 1000) / (TP_N * 2);
await l2.close();

console.log(`latency (n=${LAT_N}) direct stdio: p50 ${fmt(directLat.p50)} p99 ${fmt(directLat.p99)}`);
console.log(`latency (n=${LAT_N}) via link:     p50 ${fmt(linkLat.p50)} p99 ${fmt(linkLat.p99)}`);
console.log(
  `added: p50 +${fmt(linkLat.p50 - directLat.p50)} (target <= +0.2 ms), p99 +${fmt(linkLat.p99 - directLat.p99)} (target <= +0.5 ms)`,
);
console.log(
  `throughput 1 KB x ${IN_FLIGHT} in flight: direct ${directTp.toFixed(0)} msg/s, link ${linkTp.toFixed(0)} msg/s = ${ratio(linkTp, directTp)} of direct (target >= 0.35x)`,
);
console.log(`link CPU time per relayed message: ${cpuPerMsgUs.toFixed(1)} us`);
console.log(
  JSON.stringify({
    bench: "link",
    addedP50Ms: +(linkLat.p50 - directLat.p50).toFixed(3),
    addedP99Ms: +(linkLat.p99 - directLat.p99).toFixed(3),
    throughputRatio: +(linkTp / directTp).toFixed(3),
    cpuUsPerMessage: +cpuPerMsgUs.toFixed(1),
  }),
);
