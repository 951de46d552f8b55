import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "../../helpers/cli.ts";

/** Runs a snippet against cli/logging.ts in a fresh process and returns its stderr lines. */
function stderrOf(body: string, env: Record<string, string> = {}): string[] {
  const logging = join(repoRoot, "cli/logging.ts");
  const script = `import { createLogging, announceLine, fatalLines } from ${JSON.stringify(logging)};\n${body}`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    encoding: "utf8",
    env: { ...process.env, CCB_LOG_FORMAT: "", CCB_LOG_FILE: "", ...env },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, "", "nothing on stdout");
  return r.stderr.split("\n").filter(Boolean);
}

test("json format: logs, announcements, runtime warnings and fatal errors are one JSON record per line", () => {
  const lines = stderrOf(`
    const { log } = createLogging({ format: "json", level: "debug" });
    log.child("http").info("listening", { port: 1 });
    log.debug("detail");
    announceLine("ccb serve: ready");
    process.emitWarning("url.parse() is deprecated", "DeprecationWarning");
    process.stderr.write(fatalLines("it broke", "do this"));
  `);
  const recs = lines.map((l) => JSON.parse(l) as { time: string; level: string; tag?: string; msg: string });
  assert.deepEqual(
    recs.map((r) => [r.level, r.tag, r.msg]),
    [
      ["info", "http", 'listening {"port":1}'],
      ["debug", undefined, "detail"],
      ["info", undefined, "ccb serve: ready"],
      ["warn", "runtime", "url.parse() is deprecated"],
      ["fatal", undefined, "it broke do this"],
    ],
  );
  for (const r of recs) assert.ok(!Number.isNaN(Date.parse(r.time)));
});

test("CCB_LOG_FORMAT=json selects it; the default stays text (control)", () => {
  const json = stderrOf(`createLogging({}).log.info("x");`, { CCB_LOG_FORMAT: "json" });
  assert.equal((JSON.parse(json[0] as string) as { msg: string }).msg, "x");
  const text = stderrOf(`createLogging({}).log.info("x"); announceLine("a"); process.stderr.write(fatalLines("f"));`);
  assert.deepEqual(text, ["ccb x", "a", "ccb: f"]);
});
