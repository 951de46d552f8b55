// Trivial MCP tool round trip, in both protocol eras: ccb serve (workspace_status, and fs_read of a
// tiny file) vs a bare server with one echo tool, over stdio and over Streamable HTTP, with the same
// SDK client in the same run. 2025-11-25: the 1.x client against a bare 1.x server
// (bench/fixtures/bare-mcp-server.mjs); 2026-07-28: the 2.x client pinned to the new era against a
// bare 2.x server (bench/fixtures/bare-mcp-server-v2.mjs); ccb is the same process kind in both. Over stdio also the compiled binary (dist/ccb, when built)
// and a peer, @modelcontextprotocol/server-filesystem (read_text_file of the same tiny file;
// installed by scripts/setup-peers.sh into $CCB_PEERS_DIR or .cache/peers). Blocks of calls
// alternate between the servers so machine load affects all alike. Tool rows are divided by the
// bare echo, ping rows by the bare ping. Targets: ccb ping <= 1.1x; ccb fs_read <= 1.3x and below
// the server-filesystem ratio. In the 2025 era over stdio the bare 2.x server answers too ("bare v2
// echo"): the floor the 2.x SDK itself sets for that era.
// Before and after a change, in the same run: CCB_BENCH_BASE=<other checkouts, built, comma-separated>
// (and, when one holds a compiled dist/ccb, its binary) adds that ccb's rows in the 2025 era, named
// by its commit, and a last table puts each ccb row of this checkout beside the same row of each.
//   node --import tsx bench/mcp-roundtrip.bench.ts [--calls 2000] [--stdio-only]
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttp } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as LegacyStdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as LegacyHttp } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { fmt, pinToOneCpu, ratio, summarize } from "./lib.ts";

const pinning = pinToOneCpu();
const root = fileURLToPath(new URL("..", import.meta.url));
const callsArg = process.argv.indexOf("--calls");
const CALLS = callsArg > 0 ? Number(process.argv[callsArg + 1]) : 2000;
const BLOCK = 100;
const WARMUP = 200;

const ws = realpathSync(mkdtempSync(join(tmpdir(), "ccb-bench-rt-")));
writeFileSync(join(ws, "tiny.txt"), "hello\n");
const CCB = [join(root, "bin/ccb.mjs"), "serve", "--no-workbench", "--workspace", ws, "--log-level", "error"];
// CCB_BENCH_BASE=<other checkouts, built>: the same rows for those ccbs too (e.g. the commit before a
// change), measured in the same run, alternating with the rest; each named by its short commit.
const BASES = (process.env.CCB_BENCH_BASE ?? "")
  .split(",")
  .filter(Boolean)
  .map((dir) => ({
    label: execFileSync("git", ["-C", dir, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim(),
    args: [join(dir, "bin/ccb.mjs"), ...CCB.slice(1)],
    bin: join(dir, "dist/ccb"),
  }));
const STDIO_ONLY = process.argv.includes("--stdio-only");
const BARE_V1 = [join(root, "bench/fixtures/bare-mcp-server.mjs")];
const BARE_V2 = [join(root, "bench/fixtures/bare-mcp-server-v2.mjs")];
type Era = "2025-11-25" | "2026-07-28";
let era: Era = "2025-11-25";
let BARE = BARE_V1;

/** A client of the era being measured: the 1.x SDK (handshake), or the 2.x SDK pinned to 2026-07-28. */
type Client = LegacyClient | ModernClient;
function newClient(): Client {
  return era === "2025-11-25"
    ? new LegacyClient({ name: "bench", version: "1" })
    : new ModernClient({ name: "bench", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
}
function stdioTransport(params: { command: string; args: string[]; env: Record<string, string> }) {
  return era === "2025-11-25"
    ? new LegacyStdio({ ...params, stderr: "ignore" })
    : new ModernStdio({ ...params, stderr: "ignore" });
}
async function connect(client: Client, transport: unknown): Promise<void> {
  await (client as { connect(t: unknown): Promise<void> }).connect(transport);
}
function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<unknown> {
  return (client as { callTool(p: unknown): Promise<unknown> }).callTool({ name, arguments: args });
}
const BIN = process.env.CCB_BENCH_BIN ?? join(root, "dist/ccb");
const peersDir = process.env.CCB_PEERS_DIR ?? join(root, ".cache/peers");
const FS_PEER = join(peersDir, "server-filesystem/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const env = { ...process.env, CCB_LOG_LEVEL: "error" } as Record<string, string>;

interface Target {
  name: string;
  /** The server's process, for its CPU time (stdio and HTTP targets alike). */
  pid?: number | null | undefined;
  client: Client;
  call: () => Promise<unknown>;
  close: () => Promise<void>;
}

/** The same connection, measuring `ping` (protocol and transport only, no tool; the 2025 era only). */
function pingOf(t: Target, name: string): Target {
  return { name, pid: t.pid, client: t.client, call: () => (t.client as LegacyClient).ping(), close: async () => {} };
}

async function stdioTarget(
  name: string,
  args: string[],
  tool: string,
  toolArgs: Record<string, unknown>,
  command = process.execPath,
): Promise<Target> {
  const client = newClient();
  const transport = stdioTransport({ command, args, env });
  await connect(client, transport);
  return {
    name,
    pid: transport.pid,
    client,
    call: () => callTool(client, tool, toolArgs),
    close: () => client.close(),
  };
}

async function httpTarget(
  name: string,
  args: string[],
  tool: string,
  toolArgs: Record<string, unknown>,
): Promise<Target> {
  const child: ChildProcess = spawn(
    process.execPath,
    [...args, "--http", ...(args === BARE_V1 || args === BARE_V2 ? [] : ["--port", "0"])],
    {
      env,
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let err = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      err += d;
      const m = /listening on (http:\/\/\S+\/mcp)/.exec(err);
      if (m) resolve(m[1] as string);
    });
    child.once("exit", (c) => reject(new Error(`${name} exited ${c}: ${err}`)));
  });
  const client = newClient();
  await connect(client, era === "2025-11-25" ? new LegacyHttp(new URL(url)) : new ModernHttp(new URL(url)));
  return {
    name,
    pid: child.pid,
    client,
    call: () => callTool(client, tool, toolArgs),
    close: async () => {
      await client.close();
      child.kill("SIGTERM");
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once("exit", r)));
    },
  };
}

/**
 * CPU time a process has run, in ms, all its threads (libuv's pool included): /proc/<pid>/task/<tid>/schedstat,
 * nanoseconds on a CPU. Wall time on a loaded machine is mostly waiting; this is what the server spent.
 */
function cpuMs(pid: number | null | undefined): number {
  if (!pid) return Number.NaN;
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return ns / 1e6;
}

/** Wall-clock samples per target, and the server's CPU time per call (µs) over the measured blocks. */
async function measure(targets: Target[]): Promise<{ samples: Map<string, number[]>; cpu: Map<string, number> }> {
  const samples = new Map<string, number[]>(targets.map((t) => [t.name, []]));
  const cpu = new Map<string, number>(targets.map((t) => [t.name, 0]));
  for (const t of targets) for (let i = 0; i < WARMUP; i++) await t.call();
  for (let done = 0; done < CALLS; done += BLOCK) {
    for (const t of targets) {
      const out = samples.get(t.name)!;
      const c0 = cpuMs(t.pid);
      for (let i = 0; i < BLOCK; i++) {
        const t0 = performance.now();
        const r = (await t.call()) as { isError?: boolean };
        out.push(performance.now() - t0);
        if (r.isError) throw new Error(`${t.name} returned an error: ${JSON.stringify(r)}`);
      }
      cpu.set(t.name, cpu.get(t.name)! + cpuMs(t.pid) - c0);
    }
  }
  for (const [name, ms] of cpu) cpu.set(name, (ms * 1000) / CALLS);
  return { samples, cpu };
}

const summary: Record<string, unknown> = { calls: CALLS, loadavgBefore: loadavg().map((x) => +x.toFixed(1)) };
try {
  for (const [e, transport] of (
    [
      ["2025-11-25", "stdio"],
      ["2025-11-25", "http"],
      ["2026-07-28", "stdio"],
      ["2026-07-28", "http"],
    ] as const
  ).filter(([, t]) => !STDIO_ONLY || t === "stdio")) {
    era = e;
    BARE = era === "2025-11-25" ? BARE_V1 : BARE_V2;
    const make =
      transport === "stdio"
        ? (n: string, a: string[], t: string, x: Record<string, unknown>) => stdioTarget(n, [...a, "--stdio"], t, x)
        : httpTarget;
    const bare = await make("bare echo", BARE, "echo", { text: "hi" });
    const ccb = await make("ccb workspace_status", CCB, "workspace_status", {});
    const fsRead = (t: Target, name: string): Target => ({
      ...t,
      name,
      call: () => callTool(t.client, "fs_read", { path: "tiny.txt" }),
      close: async () => {},
    });
    const targets = [bare, ccb, fsRead(ccb, "ccb fs_read tiny")];
    if (era === "2025-11-25")
      for (const b of BASES) {
        const base = await make(`${b.label} workspace_status`, b.args, "workspace_status", {});
        targets.push(base, fsRead(base, `${b.label} fs_read tiny`));
      }
    if (transport === "stdio") {
      if (era === "2025-11-25") targets.push(await make("bare v2 echo", BARE_V2, "echo", { text: "hi" }));
      if (existsSync(BIN))
        targets.push(
          await stdioTarget("ccb-bin fs_read tiny", [...CCB.slice(1), "--stdio"], "fs_read", { path: "tiny.txt" }, BIN),
        );
      else console.log(`(no ${BIN}: run scripts/compile.mjs for the compiled rows)`);
      for (const b of era === "2025-11-25" ? BASES : [])
        if (existsSync(b.bin))
          targets.push(
            await stdioTarget(
              `${b.label}-bin fs_read tiny`,
              [...CCB.slice(1), "--stdio"],
              "fs_read",
              { path: "tiny.txt" },
              b.bin,
            ),
          );
      // server-filesystem speaks only the 2025 era (it answers no server/discover): its row is there.
      if (era === "2026-07-28") console.log("(server-filesystem speaks only 2025-11-25: no 2026 row)");
      else if (existsSync(FS_PEER))
        targets.push(
          await stdioTarget("server-filesystem read", [FS_PEER, ws], "read_text_file", { path: join(ws, "tiny.txt") }),
        );
      else console.log(`(no ${FS_PEER}: run scripts/setup-peers.sh for the server-filesystem row)`);
    }
    // 2026-07-28 has no ping: the tool rows are the whole comparison there.
    if (era === "2025-11-25") {
      targets.push(pingOf(bare, "bare ping"), pingOf(ccb, "ccb ping"));
      const bin = targets.find((t) => t.name === "ccb-bin fs_read tiny");
      if (bin) targets.push(pingOf(bin, "ccb-bin ping"));
    }
    const { samples, cpu } = await measure(targets);
    for (const t of targets) await t.close();
    const base = summarize(samples.get("bare echo")!);
    console.log(
      `\n${era} ${transport}: ${CALLS} calls each (after ${WARMUP} warm-up; tool rows vs bare echo, ping rows vs bare ping), blocks of ${BLOCK} alternating`,
    );
    console.log(
      `  ${"target".padEnd(24)} ${"p50".padStart(10)} ${"p99".padStart(10)} ${"mean".padStart(10)}   p50 ratio  p99 ratio  ${"server CPU/call".padStart(15)}  CPU ratio`,
    );
    const basePing = samples.has("bare ping") ? summarize(samples.get("bare ping")!) : base;
    for (const [name, s] of samples) {
      const x = summarize(s);
      const b = name.endsWith("ping") ? basePing : base;
      const c = cpu.get(name)!;
      const cb = cpu.get(name.endsWith("ping") && cpu.has("bare ping") ? "bare ping" : "bare echo")!;
      console.log(
        `  ${name.padEnd(24)} ${fmt(x.p50).padStart(10)} ${fmt(x.p99).padStart(10)} ${fmt(x.mean).padStart(10)}   ${ratio(x.p50, b.p50).padStart(9)}  ${ratio(x.p99, b.p99).padStart(9)}  ${`${c.toFixed(0)} µs`.padStart(15)}  ${ratio(c, cb).padStart(9)}`,
      );
      summary[`${era === "2025-11-25" ? "" : "2026."}${transport}.${name.replace(/ /g, "_")}`] = {
        p50: +x.p50.toFixed(3),
        p99: +x.p99.toFixed(3),
        p50Ratio: +(x.p50 / b.p50).toFixed(2),
        p99Ratio: +(x.p99 / b.p99).toFixed(2),
        cpuUs: +c.toFixed(1),
        cpuRatio: +(c / cb).toFixed(2),
      };
    }
    if (BASES.length > 0 && era === "2025-11-25") {
      // This checkout against each base, row by row (p50s of the same run): below 1 = faster now.
      console.log(`\n${era} ${transport}: this ccb / each base ccb (p50; server CPU per call)`);
      for (const b of BASES)
        for (const [now, before] of [
          ["ccb workspace_status", `${b.label} workspace_status`],
          ["ccb fs_read tiny", `${b.label} fs_read tiny`],
          ["ccb-bin fs_read tiny", `${b.label}-bin fs_read tiny`],
        ] as const) {
          const x = samples.get(now);
          const y = samples.get(before);
          if (!x || !y) continue;
          const r = summarize(x).p50 / summarize(y).p50;
          const rc = cpu.get(now)! / cpu.get(before)!;
          console.log(`  ${now.padEnd(24)} ${r.toFixed(2)}x; CPU ${rc.toFixed(2)}x  ${before}`);
          summary[`${transport}.now_vs.${before.replace(/ /g, "_")}`] = { p50: +r.toFixed(2), cpu: +rc.toFixed(2) };
        }
    }
  }
} finally {
  rmSync(ws, { recursive: true, force: true });
}
summary.loadavgAfter = loadavg().map((x) => +x.toFixed(1));
console.log(
  `\nload average before/after: ${String(summary.loadavgBefore)} / ${String(summary.loadavgAfter)} (ratios are only meaningful on a quiet machine)`,
);
console.log(
  `\n${JSON.stringify({ bench: "mcp-roundtrip", target: "ping <=1.1x bare ping; fs_read <=1.3x bare echo and below server-filesystem", pinning, ...summary })}`,
);
process.exit(0);
