import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** What `probe` asks for: a GET of `url`, or of `path` over the Unix socket `socketPath`. */
export interface ProbeTarget {
  url?: string;
  socketPath?: string;
  path?: string;
  headers?: Record<string, string>;
  cookie?: string;
}

/** The answer, or the error code as `status` when the connection failed. */
export interface ProbeResult {
  status: number | string;
  body: string;
  location?: string;
  setCookie?: string[];
}

const SCRIPT = `import { request } from "node:http";
let input = ""; process.stdin.on("data", (d) => (input += d)).on("end", () => {
  const t = JSON.parse(input);
  const u = t.url ? new URL(t.url) : undefined;
  const headers = { ...(t.headers ?? {}), ...(t.cookie ? { cookie: t.cookie } : {}) };
  const where = t.socketPath ? { socketPath: t.socketPath } : { host: u.hostname, port: u.port };
  const req = request({ ...where, path: t.path ?? (u ? u.pathname + u.search : "/"), headers }, (res) => {
    let body = ""; res.on("data", (d) => (body += d));
    res.on("end", () => console.log(JSON.stringify({ status: res.statusCode, body: body.slice(0, 4000), location: res.headers.location, setCookie: res.headers["set-cookie"] })));
  });
  req.on("error", (e) => console.log(JSON.stringify({ status: e.code, body: e.message })));
  req.end();
});`;

/**
 * Another local account for attack tests (useradd, no home, no login shell) and an HTTP probe that
 * runs as that account or as the test's own (the positive control), in a process of its own.
 */
export class OtherAccount {
  readonly name: string;
  readonly #script: string;

  private constructor(name: string, script: string) {
    this.name = name;
    this.#script = script;
  }

  static create(prefix: string): OtherAccount {
    const name = `${prefix}${randomBytes(3).toString("hex")}`;
    const script = join("/tmp", `ccb-probe-${randomBytes(4).toString("hex")}.mjs`);
    writeFileSync(script, SCRIPT);
    chmodSync(script, 0o644);
    execFileSync("useradd", ["--no-create-home", "--shell", "/usr/sbin/nologin", name]);
    return new OtherAccount(name, script);
  }

  /** GET `target` as this account (`as: "other"`) or as the test's own account (`as: "self"`). */
  probe(as: "other" | "self", target: ProbeTarget): ProbeResult {
    const cmd =
      as === "other"
        ? ["runuser", "-u", this.name, "--", process.execPath, this.#script]
        : [process.execPath, this.#script];
    const r = spawnSync(cmd[0] as string, cmd.slice(1), {
      input: JSON.stringify(target),
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as ProbeResult;
  }

  remove(): void {
    spawnSync("userdel", ["--force", this.name]);
    rmSync(this.#script, { force: true });
  }
}
