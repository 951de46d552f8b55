/**
 * IDE server benchmarks (run: node --import tsx bench/ide.bench.ts):
 * 1. tool round trip (tools/call getWorkspaceFolders) over the IDE socket of the compiled binary
 *    (dist/ccb `ide --no-workbench`, built by scripts/compile.mjs when missing) and of Node
 *    (bin/ccb.mjs), vs a raw `ws` echo server (bench/fixtures/ws-echo.mjs, its own Node process)
 *    answering with a frame of the same size; blocks alternate between the three, same run:
 *    p50/p99 and their ratios (target <= 1.3x for the binary);
 * 2. time from spawning `ccb ide --no-workbench` to its lock file existing, with the compiled
 *    binary and with Node.
 *   Env: BENCH_N (calls per target, default 3000), BENCH_RUNS (lock-file runs, default 7).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, watch } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
import { pinToOneCpu } from "./lib.ts";

const pinning = pinToOneCpu();
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

function exited(child: ChildProcess): Promise<void> {
  return new Promise((r) =>
    child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", () => r()),
  );
}

/** Start `ccb ide --no-workbench` and read its port and token from the lock file it writes. */
async function startIdeProcess(
  command: string,
  args: string[],
  dir: string,
): Promise<{ child: ChildProcess; port: number; token: string }> {
  const ws = join(dir, "ws");
  const ideDir = join(dir, "cfg", "ide");
  mkdirSync(ws, { recursive: true });
  mkdirSync(ideDir, { recursive: true, mode: 0o700 });
  const child = spawn(command, [...args, "ide", "--no-workbench", "--workspace", ws, "--log-level", "error"], {
    env: { ...process.env, CLAUDE_CONFIG_DIR: join(dir, "cfg") },
    stdio: "ignore",
  });
  for (let i = 0; i < 600; i++) {
    const lock = readdirSync(ideDir).find((n) => /^\d+\.lock$/.test(n));
    if (lock) {
      try {
        const body = JSON.parse(readFileSync(join(ideDir, lock), "utf8")) as { authToken: string };
        return { child, port: Number(lock.slice(0, -5)), token: body.authToken };
      } catch {
        // written but not complete yet
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGKILL");
  throw new Error(`${command} ide wrote no lock file in 30 s`);
}

interface Peer {
  name: string;
  ws: WebSocket;
  times: number[];
  stop: () => Promise<void>;
}

async function idePeer(name: string, command: string, args: string[]): Promise<Peer> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "ccb-bench-ide-")));
  const p = await startIdeProcess(command, args, dir);
  const ws = await open(`ws://127.0.0.1:${p.port}`, { "x-claude-code-ide-authorization": p.token });
  let id = 0;
  const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params });
  await roundTrips(
    ws,
    () =>
      rpc("initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      }),
    1,
  );
  ws.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  return {
    name,
    ws,
    times: [],
    async stop() {
      ws.close();
      p.child.kill("SIGTERM");
      await exited(p.child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let callId = 0;
const call = () =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: ++callId,
    method: "tools/call",
    params: { name: "getWorkspaceFolders", arguments: {}, _meta: { "claudecode/toolUseId": `toolu_${callId}` } },
  });

async function benchRoundTrip(bin: string) {
  const compiled = await idePeer("ccb ide (compiled)", bin, []);
  const node = await idePeer("ccb ide (node)", process.execPath, [join(root, "bin/ccb.mjs")]);
  // The baseline answers with a frame of the size of ccb's answer.
  const sample = await new Promise<string>((resolve) => {
    compiled.ws.once("message", (d) => resolve(String(d)));
    compiled.ws.send(call());
  });
  const echoChild = spawn(process.execPath, [join(root, "bench/fixtures/ws-echo.mjs"), sample], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const echoPort = await new Promise<number>((resolve, reject) => {
    let out = "";
    echoChild.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const m = /listening on (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    echoChild.once("exit", (c) => reject(new Error(`ws echo exited ${c}`)));
  });
  const raw: Peer = {
    name: "raw ws echo (node)",
    ws: await open(`ws://127.0.0.1:${echoPort}`),
    times: [],
    async stop() {
      raw.ws.close();
      echoChild.kill("SIGTERM");
      await exited(echoChild);
    },
  };
  const peers = [raw, compiled, node];
  for (const p of peers) await roundTrips(p.ws, call, WARMUP);
  // Interleave in blocks so machine noise hits all alike.
  const block = 250;
  for (let done = 0; done < N; done += block)
    for (const p of peers) p.times.push(...(await roundTrips(p.ws, call, block)));
  for (const p of peers) await p.stop();
  return peers.map((p) => {
    const s = [...p.times].sort((a, b) => a - b);
    return { name: p.name, p50: pct(s, 50), p99: pct(s, 99) };
  });
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

const bin = process.env.CCB_BENCH_BIN ?? join(root, "dist/ccb");
if (!existsSync(bin)) spawnSync(process.execPath, [join(root, "scripts/compile.mjs")], { cwd: root, stdio: "inherit" });
if (!existsSync(join(root, "dist/node/main.mjs")))
  spawnSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root, stdio: "inherit" });
const loadBefore = loadavg().map((x) => +x.toFixed(1));
const rows = await benchRoundTrip(bin);
const base = rows[0]!;
console.log(
  `tool round trip (getWorkspaceFolders), ${N} calls each after ${WARMUP} warm-up, blocks of 250 alternating:`,
);
console.log(`  ${"target".padEnd(22)} ${"p50".padStart(10)} ${"p99".padStart(10)}   p50 ratio  p99 ratio`);
for (const r of rows) {
  console.log(
    `  ${r.name.padEnd(22)} ${`${r.p50.toFixed(3)} ms`.padStart(10)} ${`${r.p99.toFixed(3)} ms`.padStart(10)}   ${`${(r.p50 / base.p50).toFixed(2)}x`.padStart(9)}  ${`${(r.p99 / base.p99).toFixed(2)}x`.padStart(9)}`,
  );
}
console.log("  (target: compiled <= 1.3x the raw ws echo)");
const compiledRow = rows[1]!;
const nodeRow = rows[2]!;

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const compiled = await timeToLock(bin, [], RUNS);
const viaNode = await timeToLock(process.execPath, [join(root, "bin/ccb.mjs")], RUNS);
console.log(
  `start -> lock file, compiled dist/ccb (${RUNS} runs): median ${pct(compiled, 50).toFixed(0)} ms, max ${compiled.at(-1)!.toFixed(0)} ms`,
);
console.log(
  `start -> lock file, node bin/ccb.mjs   (${RUNS} runs): median ${pct(viaNode, 50).toFixed(0)} ms, max ${viaNode.at(-1)!.toFixed(0)} ms`,
);

console.log(
  JSON.stringify({
    bench: "ide",
    roundTripMs: { compiled: compiledRow, node: nodeRow, raw: base },
    ratio: {
      p50: Number((compiledRow.p50 / base.p50).toFixed(3)),
      p99: Number((compiledRow.p99 / base.p99).toFixed(3)),
    },
    nodeRatio: { p50: Number((nodeRow.p50 / base.p50).toFixed(3)), p99: Number((nodeRow.p99 / base.p99).toFixed(3)) },
    loadavg: { before: loadBefore, after: loadavg().map((x) => +x.toFixed(1)) },
    pinning,
    lockFileMs: { compiledMedian: Math.round(pct(compiled, 50)), nodeMedian: Math.round(pct(viaNode, 50)) },
  }),
);
