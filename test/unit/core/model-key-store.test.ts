import assert from "node:assert/strict";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { CredentialStore } from "../../../src/core/model-key-store.ts";
import { maskSecrets } from "../../../src/core/secret-vault.ts";

const root = mkdtempSync(join(tmpdir(), "ccb-cred-"));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(root, `c${n++}`);

test("write: 0600 file in a 0700 folder, atomic (no temp file left), read back and registered for masking", () => {
  const s = new CredentialStore(fresh());
  assert.equal(s.read(), undefined);
  s.write("sk-ant-unit-credential-1234567890");
  assert.equal(statSync(s.path).mode & 0o777, 0o600);
  assert.equal(statSync(s.dir).mode & 0o777, 0o700);
  assert.equal(s.read(), "sk-ant-unit-credential-1234567890");
  assert.equal(maskSecrets("x sk-ant-unit-credential-1234567890 y"), "x [secret removed by ccb] y");
  s.write("sk-ant-unit-credential-replaced-000");
  assert.equal(s.read(), "sk-ant-unit-credential-replaced-000");
  assert.deepEqual(readdirSync(s.dir), ["anthropic.json"], "no temp file left beside it");
  assert.match(readFileSync(s.path, "utf8"), /replaced/);
  assert.equal(s.remove(), true);
  assert.equal(s.remove(), false);
  assert.equal(s.read(), undefined);
});

test("an existing secrets folder that others can read is tightened to 0700 before writing", () => {
  const config = fresh();
  mkdirSync(join(config, "secrets"), { recursive: true, mode: 0o755 });
  chmodSync(join(config, "secrets"), 0o755);
  const s = new CredentialStore(config);
  s.write("sk-ant-unit-credential-abcdefghij");
  assert.equal(statSync(s.dir).mode & 0o777, 0o700);
});

test("attack: a key file others can read, or a symlink planted in its place, is not trusted", () => {
  const s = new CredentialStore(fresh());
  s.write("sk-ant-unit-credential-open-file-1");
  chmodSync(s.path, 0o644);
  assert.equal(s.read(), undefined, "a group/world-readable file is ignored");
  chmodSync(s.path, 0o600);
  assert.equal(s.read(), "sk-ant-unit-credential-open-file-1", "positive control: the same file at 0600 is read");

  const t = new CredentialStore(fresh());
  const elsewhere = join(root, `planted-${n}.json`);
  writeFileSync(elsewhere, JSON.stringify({ version: 1, anthropicApiKey: "sk-ant-planted-by-someone" }), {
    mode: 0o600,
  });
  mkdirSync(t.dir, { recursive: true, mode: 0o700 });
  symlinkSync(elsewhere, t.path);
  assert.equal(t.read(), undefined, "a symlink is not followed");
});

test("a symlinked secrets folder is refused for writing", () => {
  const config = fresh();
  mkdirSync(config, { recursive: true });
  const target = join(root, `target-${n}`);
  mkdirSync(target, { mode: 0o700 });
  symlinkSync(target, join(config, "secrets"));
  const s = new CredentialStore(config);
  assert.throws(() => s.write("sk-ant-unit-credential-symlinked"), /not a directory owned by you with mode 0700/);
});
