import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defineCommand } from "citty";
import { checkFlags, repeatedFlag, resolveCommand, UsageError } from "../../../cli/argv.ts";
import { isCcbError } from "../../../src/core/errors.ts";

const serve = defineCommand({
  meta: { name: "serve", description: "x" },
  args: {
    port: { type: "string", valueHint: "n" },
    workspace: { type: "string", alias: "w" },
    share: { type: "boolean", default: true },
  },
});
const root = defineCommand({ meta: { name: "ccb" }, subCommands: { serve } });

async function check(argv: string[]): Promise<string | undefined> {
  try {
    const r = await resolveCommand(root, argv);
    await checkFlags(r, r.path.length === 0);
    return undefined;
  } catch (err) {
    assert.ok(err instanceof UsageError, String(err));
    return err.message;
  }
}

describe("the CLI layer over citty", () => {
  it("accepts what a command defines: --x v, --x=v, -w v, --no-<switch>, -h; nothing after --", async () => {
    assert.equal(await check(["serve", "--port", "1", "--port=2", "-w", "/a", "--no-share", "-h"]), undefined);
    assert.equal(await check(["serve", "--", "--anything", "goes"]), undefined);
  });

  it("refuses unknown flags with a suggestion, missing values and stray words", async () => {
    assert.equal(
      await check(["serve", "--prot", "1"]),
      "ccb serve: unknown flag --prot. Did you mean --port? Run `ccb serve --help` for its flags.",
    );
    assert.equal(await check(["serve", "-x"]), "ccb serve: unknown flag -x. Run `ccb serve --help` for its flags.");
    assert.equal(await check(["serve", "--port"]), "ccb serve: --port needs a value (<n>).");
    assert.equal(await check(["serve", "-w"]), "ccb serve: -w needs a value.");
    assert.equal(
      await check(["serve", "stray"]),
      'ccb serve: unexpected argument "stray". Run `ccb serve --help` for usage.',
    );
    assert.equal(await check(["srve"]), 'ccb: unknown command "srve". Did you mean serve?');
  });

  it("collects every value of a repeatable flag (citty keeps the last), up to --", () => {
    assert.deepEqual(
      repeatedFlag(
        ["--workspace", "/a", "--port", "1", "-w", "/b", "--workspace=/c", "--", "-w", "/d"],
        "workspace",
        "?",
        "w",
      ),
      ["/a", "/b", "/c"],
    );
    assert.deepEqual(repeatedFlag(["--port", "1"], "workspace", "?", "w"), []);
    for (const argv of [["--workspace"], ["--workspace", "--port", "1"], ["-w", "-x"]])
      assert.throws(
        () => repeatedFlag(argv, "workspace", "--workspace needs a directory.", "w"),
        (e: unknown) => isCcbError(e, "INVALID_ARGUMENT") && e.message === "--workspace needs a directory.",
      );
    assert.deepEqual(
      repeatedFlag(["--workspace=-odd"], "workspace", "?", "w"),
      ["-odd"],
      "an inline value is the user's",
    );
  });
});
