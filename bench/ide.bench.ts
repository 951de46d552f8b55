/**
 * IDE server benchmarks (run: node --import tsx bench/ide.bench.ts):
 * 1. tool round trip (tools/call getWorkspaceFolders) over the IDE socket vs a raw `ws` echo
 *    server answering a frame of the same size, same run: p50/p99 and their ratios (target <= 1.3x);
 * 2. time from spawning `ccb ide --no-workbench` to its lock file existing, with the compiled
 *    binary (dist/ccb, built by scripts/compile.mjs when missing) and with Node (bin/ccb.mjs).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { WebSocket, WebSocketServer } from "ws";
import { createCore } from "../src/core/core.ts";
import { silentLogger } from "../src/core/log.ts";
import { startIde } from "../src/protocols/ide/ide.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const N = Number(process.env.BENCH_N ?? 3000);
const WARMUP = 300;

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function roundTrips(ws: WebSocket, frame: () => string, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve) => {
      ws.once("message", () => resolve());
      ws.send(frame());
    });
    times.push(performance.now() - t0);
  }
  return times;
}

function open(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ["mcp"], { headers, perMessageDeflate: false });
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

async function benchRoundTrip() {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "ccb-bench-ide-")));
  const core = createCore({ roots: [dir], log: silentLogger });
  const ide = await startIde({ core, log: silentLogger, lockDir: join(dir, "locks") });
  const client = await open(`ws://127.0.0.1:${ide.port}`, { "x-claude-code-ide-authorization": ide.authToken });
  let id = 0;
  const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params });
  await roundTrips(client, () => rpc("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } }), 1);
  client.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  const call = () => rpc("tools/call", { name: "getWorkspaceFolders", arguments: {}, _meta: { "claudecode/toolUseId": `toolu_${id}` } });

  // The baseline: a raw ws server answering each frame with a reply of the same size as ccb's.
  const sample = await new Promise<string>((resolve) => {
    client.once("message", (d) => resolve(String(d)));
    client.send(call());
  });
  const echo = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false, handleProtocols: () => "mcp" });
  echo.on("connection", (ws) => ws.on("message", () => ws.send(sample)));
  await new Promise<void>((r) => echo.once("listening", () => r()));
  const raw = await open(`ws://127.0.0.1:${(echo.address() as { port: number }).port}`);

  // Interleave the two in blocks so machine noise hits both alike.
  await roundTrips(client, call, WARMUP);
  await roundTrips(raw, call, WARMUP);
  const ideTimes: number[] = [];
  const rawTimes: number[] = [];
  const block = 250;
  for (let done = 0; done < N; done += block) {
    ideTimes.push(...(await roundTrips(client, call, block)));
    rawTimes.push(...(await roundTrips(raw, call, block)));
  }
  client.close();
  raw.close();
  echo.close();
  await ide.close();
  await core.dispose();
  rmSync(dir, { recursive: true, force: true });
  ideTimes.sort((a, b) => a - b);
  rawTimes.sort((a, b) => a - b);
  const r = {
    ide: { p50: pct(ideTimes, 50), p99: pct(ideTimes, 99) },
    raw: { p50: pct(rawTimes, 50), p99: pct(rawTimes, 99) },
  };
  return { ...r, ratioP50: r.ide.p50 / r.raw.p50, ratioP99: r.ide.p99 / r.raw.p99 };
}

async function timeToLock(command: string, args: string[], runs: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "ccb-bench-lock-")));
    const ws = join(dir, "ws");
    const ideDir = join(dir, "cfg", "ide");
    mkdirSync(ws);
    mkdirSync(ideDir, { recursive: true, mode: 0o700 });
    const seen = new Promise<number>((resolve) => {
      const w = watch(ideDir, (_e, name) => {
        if (name && /^\d+\.lock$/.test(name) && existsSync(join(ideDir, name))) {
          w.close();
          resolve(performance.now());
        }
      });
    });
    const t0 = performance.now();
    const child = spawn(command, [...args, "ide", "--no-workbench", "--workspace", ws, "--log-level", "silent"], {
      env: { ...process.env, CLAUDE_CONFIG_DIR: join(dir, "cfg") },
      stdio: "ignore",
    });
    const t1 = await seen;
    out.push(t1 - t0);
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    rmSync(dir, { recursive: true, force: true });
  }
  return out.sort((a, b) => a - b);
}

const rt = await benchRoundTrip();
console.log(`tool round trip (getWorkspaceFolders, ${N} calls): ccb ide p50 ${rt.ide.p50.toFixed(3)} ms, p99 ${rt.ide.p99.toFixed(3)} ms`);
console.log(`raw ws echo (same frame sizes):            p50 ${rt.raw.p50.toFixed(3)} ms, p99 ${rt.raw.p99.toFixed(3)} ms`);
console.log(`ratio: p50 ${rt.ratioP50.toFixed(2)}x, p99 ${rt.ratioP99.toFixed(2)}x (target <= 1.3x)`);

const bin = process.env.CCB_BENCH_BIN ?? join(root, "dist/ccb");
if (!existsSync(bin)) spawnSync(process.execPath, [join(root, "scripts/compile.mjs")], { cwd: root, stdio: "inherit" });
if (!existsSync(join(root, "dist/node/main.mjs"))) spawnSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root, stdio: "inherit" });
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const compiled = await timeToLock(bin, [], RUNS);
const viaNode = await timeToLock(process.execPath, [join(root, "bin/ccb.mjs")], RUNS);
console.log(`start -> lock file, compiled dist/ccb (${RUNS} runs): median ${pct(compiled, 50).toFixed(0)} ms, max ${compiled.at(-1)!.toFixed(0)} ms`);
console.log(`start -> lock file, node bin/ccb.mjs   (${RUNS} runs): median ${pct(viaNode, 50).toFixed(0)} ms, max ${viaNode.at(-1)!.toFixed(0)} ms`);

console.log(
  JSON.stringify({
    bench: "ide",
    roundTripMs: { ide: rt.ide, raw: rt.raw },
    ratio: { p50: Number(rt.ratioP50.toFixed(3)), p99: Number(rt.ratioP99.toFixed(3)) },
    lockFileMs: { compiledMedian: Math.round(pct(compiled, 50)), nodeMedian: Math.round(pct(viaNode, 50)) },
  }),
);
