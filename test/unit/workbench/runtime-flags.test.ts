import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseArgs } from "citty";
import { isCcbError } from "../../../src/core/errors.ts";
import {
  RUNTIME_FLAGS,
  runtimeArgs,
  runtimeArgv,
  runtimeOptionsFrom,
  workbenchRuntime,
} from "../../../src/workbench/runtime-flags.ts";

describe("workbench/runtime-flags: one table from the command line to a child's argv", () => {
  const parse = (argv: string[]) => parseArgs<typeof runtimeArgs>(argv, runtimeArgs);

  it("the citty arguments are the table's flags", () => {
    assert.deepEqual(
      Object.keys(runtimeArgs),
      Object.values(RUNTIME_FLAGS).map((r) => r.flag),
    );
  });

  it("flags parsed by citty come back as the same argv for a child (share stays with the front end)", () => {
    const argv = [
      "--runtime",
      "code-server",
      "--runtime-root",
      "/rt",
      "--runtime-node",
      "/n24",
      "--no-headless-client",
      "--headless-idle",
      "120",
      "--no-share",
    ];
    const options = runtimeOptionsFrom(parse(argv), {});
    assert.deepEqual(options, {
      runtime: "code-server",
      runtimeRoot: "/rt",
      runtimeNode: "/n24",
      headlessClient: false,
      headlessIdle: 120,
      share: false,
    });
    assert.deepEqual(runtimeArgv(options), argv.slice(0, -1));
    assert.deepEqual(workbenchRuntime(options), {
      runtime: "code-server",
      runtimeRoot: "/rt",
      runtimeNode: "/n24",
      headlessClient: false,
      headlessIdle: 120,
    });
  });

  it("defaults: nothing on the child's command line; the environment fills the install paths", () => {
    const options = runtimeOptionsFrom(parse([]), { CCB_RUNTIME_ROOT: "/env-rt", CCB_RUNTIME_NODE: "/env-node" });
    assert.deepEqual(options, {
      runtime: undefined,
      runtimeRoot: "/env-rt",
      runtimeNode: "/env-node",
      headlessClient: true,
      headlessIdle: undefined,
      share: true,
    });
    assert.deepEqual(runtimeOptionsFrom(parse([]), {}).runtimeRoot, undefined);
    assert.deepEqual(runtimeArgv(runtimeOptionsFrom(parse([]), {})), []);
  });

  it("--headless-idle is whole seconds (CCB_HEADLESS_IDLE too; 0 = never); anything else stops startup", () => {
    assert.equal(runtimeOptionsFrom(parse([]), { CCB_HEADLESS_IDLE: "0" }).headlessIdle, 0);
    assert.equal(runtimeOptionsFrom(parse(["--headless-idle", "30"]), { CCB_HEADLESS_IDLE: "0" }).headlessIdle, 30);
    for (const bad of ["-1", "1.5", "ten", "10s"])
      assert.throws(
        () => runtimeOptionsFrom(parse(["--headless-idle", bad]), {}),
        (e: unknown) => isCcbError(e) && e.code === "INVALID_ARGUMENT" && /--headless-idle must be/.test(e.message),
        bad,
      );
  });

  it("an unknown runtime stops startup", () => {
    assert.throws(
      () => runtimeOptionsFrom(parse(["--runtime", "vim"]), {}),
      (e: unknown) => isCcbError(e) && e.code === "INVALID_ARGUMENT" && /--runtime must be/.test(e.message),
    );
  });
});
