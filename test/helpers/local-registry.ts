import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { peerBin } from "./install.ts";

/** A free loopback port (closed again: nothing listens there until someone binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

export interface LocalRegistry {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  /** An npmrc that points npm at this registry with a publish token. */
  npmrc: string;
  /** Pack a folder and publish it; returns the tarball's `dist.integrity`. */
  publish(folder: string, env: Record<string, string>): string;
  close(): void;
}

/** A real npm registry (verdaccio) on loopback, with no uplink: only what a test publishes exists. */
export async function startLocalRegistry(dir: string): Promise<LocalRegistry> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const cfg = join(dir, "verdaccio.yaml");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    cfg,
    `storage: ${join(dir, "storage")}\nauth:\n  htpasswd:\n    file: ${join(dir, "htpasswd")}\nuplinks: {}\npackages:\n  '**':\n    access: $all\n    publish: $authenticated\nlog: { type: stdout, format: pretty, level: warn }\n`,
  );
  const child: ChildProcess = spawn(
    process.execPath,
    [peerBin("verdaccio", "verdaccio", "bin/verdaccio"), "--config", cfg, "--listen", `127.0.0.1:${port}`],
    { stdio: "ignore" },
  );
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) => reject(new Error(`verdaccio exited (${code}) before it answered`))),
  );
  exited.catch(() => undefined);
  // verdaccio answers its ping once it listens; the test's own timeout bounds this wait.
  for (;;) {
    const up = await Promise.race([
      fetch(`${url}-/ping`).then(
        (x) => x.ok,
        () => false,
      ),
      exited,
    ]);
    if (up) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const user = await fetch(`${url}-/user/org.couchdb.user:tester`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "tester", password: "tester-password" }),
  });
  const { token } = (await user.json()) as { token: string };
  const npmrc = join(dir, "npmrc");
  writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`, { mode: 0o600 });
  return {
    url,
    npmrc,
    publish(folder, env) {
      const out = join(dir, "packed");
      mkdirSync(out, { recursive: true });
      const pack = spawnSync("npm", ["pack", folder, "--pack-destination", out, "--json"], {
        env: { ...env, npm_config_userconfig: npmrc },
        encoding: "utf8",
      });
      if (pack.status !== 0) throw new Error(`npm pack ${folder}: ${pack.stderr}`);
      const [info] = JSON.parse(pack.stdout) as Array<{ filename: string; integrity: string }>;
      if (!info) throw new Error(`npm pack ${folder} said nothing`);
      const pub = spawnSync("npm", ["publish", join(out, info.filename), "--registry", url], {
        env: { ...env, npm_config_userconfig: npmrc },
        encoding: "utf8",
      });
      if (pub.status !== 0) throw new Error(`npm publish ${folder}: ${pub.stderr}`);
      return info.integrity;
    },
    close() {
      child.kill("SIGTERM");
    },
  };
}
