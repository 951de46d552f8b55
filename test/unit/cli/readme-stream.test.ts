import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

/**
 * The README's `ccb stream` section tells what `--help` tells: the URL (a one-time link) is read from
 * stdin (`--url -`), never put on a command line where every local account reads it in /proc.
 */
describe("README: ccb stream", () => {
  const readme = readFileSync(join(import.meta.dirname, "../../../README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## `ccb stream`"), readme.indexOf("## `ccb runtime`"));
  const stream = readFileSync(join(import.meta.dirname, "../../../cli/commands/stream.ts"), "utf8");

  it("every example runs it with --url - (the link on stdin), as --help says", () => {
    const examples = [...section.matchAll(/```bash\n([\s\S]*?)```/g)].flatMap((m) =>
      (m[1] ?? "").split("\n").filter((l) => /^[^#]*\bccb stream\b/.test(l)),
    );
    assert.ok(examples.length > 0, "the section has an example");
    for (const line of examples) assert.match(line, /\| ccb stream .*--url -(\s|$)/, line);
    assert.match(stream, /`-` reads it from\s+stdin|reads it from stdin/);
    assert.match(stream, /args\.url === "-"/);
  });

  it("control: the example the README had (a URL on the command line) is caught", () => {
    const old = 'ccb stream --url "$WORKBENCH_URL"';
    assert.doesNotMatch(old, /\| ccb stream .*--url -(\s|$)/);
  });
});
