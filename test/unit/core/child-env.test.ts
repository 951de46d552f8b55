import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, test } from "node:test";
import { childEnv } from "../../../src/core/child-env.ts";
import {
  MASK,
  maskDeep,
  maskSecrets,
  resetSecretsForTests,
  secretValue,
  takeSecrets,
  withSecrets,
} from "../../../src/core/secret-vault.ts";

describe("platform: secrets and the child environment policy", () => {
  afterEach(() => resetSecretsForTests());

  test("takeSecrets moves every secret (and <NAME>_FILE) out of the environment into the vault", () => {
    const dir = mkdtempSync(join(tmpdir(), "ccb-secrets-unit-"));
    try {
      writeFileSync(join(dir, "tok"), "file-token-0123456789\n");
      const env: NodeJS.ProcessEnv = {
        PATH: "/bin",
        CCB_AUTH_TOKEN: "ccb-token-0123456789",
        ACP_RCS_TOKEN: "rcs-token-0123456789",
        ANTHROPIC_API_KEY: "sk-ant-0123456789",
        ACP_AUTH_TOKEN_FILE: join(dir, "tok"),
        CCB_SOME_SECRET: "other-secret-0123456789",
        CCB_LOG_LEVEL: "debug",
      };
      takeSecrets(env);
      assert.deepEqual(Object.keys(env).sort(), ["CCB_LOG_LEVEL", "PATH"]);
      assert.equal(secretValue("CCB_AUTH_TOKEN"), "ccb-token-0123456789");
      assert.equal(secretValue("ACP_AUTH_TOKEN"), "file-token-0123456789");
      assert.equal(withSecrets(["ACP_RCS_TOKEN"], {}).ACP_RCS_TOKEN, "rcs-token-0123456789");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("childEnv passes no secret; an agent gets its own model key and nothing else", () => {
    takeSecrets({
      CCB_AUTH_TOKEN: "ccb-token-0123456789",
      ANTHROPIC_API_KEY: "sk-ant-0123456789",
      ACP_AUTH_TOKEN: "acp-token-0123456789",
    });
    const base = {
      PATH: "/bin",
      HOME: "/h",
      ANTHROPIC_AUTH_TOKEN: "still-in-env-0123",
      CCB_BRIDGE_TOKEN: "b",
      NODE_TEST_CONTEXT: "x",
    };
    assert.deepEqual(childEnv(base), { PATH: "/bin", HOME: "/h" });
    assert.deepEqual(childEnv(base, { agent: true }), {
      PATH: "/bin",
      HOME: "/h",
      ANTHROPIC_AUTH_TOKEN: "still-in-env-0123",
      ANTHROPIC_API_KEY: "sk-ant-0123456789",
    });
  });

  test("maskSecrets replaces every current secret value in model-visible output, deep in results", () => {
    assert.equal(maskSecrets("nothing registered"), "nothing registered", "control: nothing to mask");
    takeSecrets({ CCB_AUTH_TOKEN: "ccb-token-0123456789" });
    assert.equal(maskSecrets("x=ccb-token-0123456789;y=ccb-token-0123456789"), `x=${MASK};y=${MASK}`);
    const r = maskDeep({
      content: [{ type: "text", text: "CCB_AUTH_TOKEN=ccb-token-0123456789" }],
      structuredContent: { n: 1, s: ["ccb-token-0123456789"] },
    });
    assert.deepEqual(r, {
      content: [{ type: "text", text: `CCB_AUTH_TOKEN=${MASK}` }],
      structuredContent: { n: 1, s: [MASK] },
    });
  });
});
