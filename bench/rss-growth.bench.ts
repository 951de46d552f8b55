// Memory growth of `ccb serve --stdio` over a long session: RSS after the first 400 mixed calls vs
// after 10,000 (target: within 10 MiB), for ccb under Node and the compiled binary, with the bare
// SDK echo server (bench/fixtures/bare-mcp-server.mjs, ping/echo/tools/list only) in the same run.
// The mix: ping, tools/list, fs_read, fs_list, fs_search, fs_write (same file, new content),
// workspace_status, a call with invalid arguments and one of an unknown tool (error paths).
//   node --import tsx bench/rss-growth.bench.ts [--calls 10000]
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const callsArg = process.argv.indexOf("--calls");
const CALLS = callsArg > 0 ? Number(process.argv[callsArg + 1]) : 10_000;
const FIRST = 400;
const ws = mkdtempSync(join(tmpdir(), "ccb-bench-rss-"));
for (let i = 0; i < 20; i++)
  writeFileSync(join(ws, `f${i}.ts`), `export const v${i} = ${i}; // needle_rss\n`.repeat(50));
const env = { ...process.env, CCB_LOG_LEVEL: "error" } as Record<string, string>;

function rssMiB(pid: number): number {
  const s = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(s)?.[1]) / 1024;
}

type Call = (c: Client, i: number) => Promise<unknown>;
const ccbMix: Call[] = [
  (c) => c.ping(),
  (c) => c.listTools(),
  (c, i) => c.callTool({ name: "fs_read", arguments: { path: `f${i % 20}.ts` } }),
  (c) => c.callTool({ name: "fs_list", arguments: {} }),
  (c) => c.callTool({ name: "fs_search", arguments: { query: "needle_rss", maxResults: 5 } }),
  (c, i) => c.callTool({ name: "fs_write", arguments: { path: "out.txt", content: `call ${i}\n` } }),
  (c) => c.callTool({ name: "workspace_status", arguments: {} }),
  (c) => c.callTool({ name: "fs_read", arguments: { path: 42 } }).catch(() => undefined),
  (c) => c.callTool({ name: "no_such_tool", arguments: {} }).catch(() => undefined),
];
const bareMix: Call[] = [
  (c) => c.ping(),
  (c) => c.listTools(),
  (c, i) => c.callTool({ name: "echo", arguments: { text: `call ${i}` } }),
];

async function run(name: string, command: string, args: string[], mix: Call[]) {
  const transport = new StdioClientTransport({ command, args, env, stderr: "ignore" });
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error("no pid");
  const marks: Array<[number, number]> = [];
  for (let i = 0; i < CALLS; i++) {
    await (mix[i % mix.length] as Call)(client, i);
    if (i + 1 === FIRST || (i + 1) % 2000 === 0 || i + 1 === CALLS) marks.push([i + 1, rssMiB(pid)]);
  }
  await client.close();
  const first = marks[0]![1];
  const last = marks.at(-1)![1];
  return { name, marks, first, last, growth: last - first };
}

const rows = [];
const loadBefore = loadavg().map((x) => +x.toFixed(1));
try {
  rows.push(
    await run("bare SDK echo (node)", process.execPath, [join(root, "bench/fixtures/bare-mcp-server.mjs")], bareMix),
  );
  rows.push(
    await run(
      "ccb serve --stdio (node)",
      process.execPath,
      [join(root, "bin/ccb.mjs"), "serve", "--no-workbench", "--stdio", "--workspace", ws],
      ccbMix,
    ),
  );
  const bin = process.env.CCB_BENCH_BIN ?? join(root, "dist/ccb");
  if (existsSync(bin))
    rows.push(
      await run("ccb serve --stdio (compiled)", bin, ["serve", "--no-workbench", "--stdio", "--workspace", ws], ccbMix),
    );
  else console.log(`(no ${bin}: run scripts/compile.mjs for the compiled row)`);
} finally {
  rmSync(ws, { recursive: true, force: true });
}
console.log(`RSS over ${CALLS} mixed calls (after call ${FIRST} -> after call ${CALLS}; target: growth <= 10 MiB):`);
for (const r of rows) {
  console.log(
    `  ${r.name.padEnd(30)} ${r.first.toFixed(1).padStart(7)} MiB -> ${r.last.toFixed(1).padStart(7)} MiB  growth ${r.growth >= 0 ? "+" : ""}${r.growth.toFixed(1)} MiB   [${r.marks.map(([n, m]) => `${n}:${m.toFixed(0)}`).join(" ")}]`,
  );
}
const loadAfter = loadavg().map((x) => +x.toFixed(1));
console.log(`load average before/after: ${String(loadBefore)} / ${String(loadAfter)}`);
console.log(
  JSON.stringify({
    bench: "rss-growth",
    calls: CALLS,
    first: FIRST,
    rows: rows.map((r) => ({
      name: r.name,
      firstMiB: +r.first.toFixed(1),
      lastMiB: +r.last.toFixed(1),
      growthMiB: +r.growth.toFixed(1),
    })),
    loadavg: { before: loadBefore, after: loadAfter },
  }),
);
process.exit(0);
