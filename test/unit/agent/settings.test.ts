import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { loadModelSettings, resolveAgentEnv } from "../../../src/agent/settings.ts";

const tmp = () => mkdtempSync(join(tmpdir(), "ccb-acp-unit-"));

test("settings: env beats project beats user; empty PATH/HOME are clear errors", () => {
  const dir = tmp();
  try {
    const cwd = join(dir, "proj");
    mkdirSync(join(cwd, ".ccb"), { recursive: true });
    mkdirSync(join(dir, "cfg", "ccb"), { recursive: true });
    writeFileSync(
      join(dir, "cfg", "ccb", "settings.json"),
      JSON.stringify({
        env: { ANTHROPIC_API_KEY: "user-key", ANTHROPIC_BASE_URL: "http://user" },
        model: "user-model",
        thinking: "low",
      }),
    );
    writeFileSync(
      join(cwd, ".ccb", "settings.json"),
      JSON.stringify({ env: { ANTHROPIC_BASE_URL: "http://project" }, model: "project-model" }),
    );
    const env = { PATH: "/bin", HOME: dir, XDG_CONFIG_HOME: join(dir, "cfg") };
    const agentEnv = resolveAgentEnv(env);
    assert.equal(agentEnv.dataDir, join(dir, ".local", "share", "ccb"));
    const s = loadModelSettings(agentEnv, cwd, env);
    assert.equal(s.apiKey, "user-key");
    assert.equal(s.baseURL, "http://project");
    assert.equal(s.model, "project-model");
    assert.equal(s.thinking, "low");
    assert.ok(s.models.includes("project-model"));
    const s2 = loadModelSettings(agentEnv, cwd, {
      ...env,
      ANTHROPIC_MODEL: "env-model",
      ANTHROPIC_BASE_URL: "http://env",
    });
    assert.equal(s2.model, "env-model");
    assert.equal(s2.baseURL, "http://env");
    assert.throws(() => resolveAgentEnv({ HOME: dir }), /PATH is empty/);
    assert.throws(() => resolveAgentEnv({ PATH: "/bin", HOME: "" }), /HOME is not set/);
    assert.equal(resolveAgentEnv({ PATH: "/bin", CCB_DATA_DIR: "/data" }).dataDir, "/data");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
