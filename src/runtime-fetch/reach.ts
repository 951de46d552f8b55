/**
 * When a download cannot reach its source, say which other way works on this machine: code-server
 * from the npm registry when that registry answers (asked through the person's own npm, with its
 * proxy and registry settings, bounded in time), else a mirror or an archive from elsewhere.
 */
import { spawn } from "node:child_process";
import { CcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { codeServerPin, npmEnv } from "./code-server.ts";

/**
 * The longest the registry probe may take: npm's own start is about half a second, but several
 * seconds on a loaded machine, and a registry behind a slow proxy takes its time too.
 */
const PROBE_MS = 20_000;

/** The registry `npm ping` reached (with its configuration), or undefined when it did not answer in time. */
export function npmRegistryAnswers(env: NodeJS.ProcessEnv, timeoutMs = PROBE_MS): Promise<string | undefined> {
  return new Promise((resolve) => {
    let out = "";
    let settled = false;
    const done = (v: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(v);
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(
        "npm",
        ["ping", `--fetch-timeout=${timeoutMs}`, "--fetch-retries=0", "--no-update-notifier", "--loglevel=notice"],
        { env: npmEnv(env), stdio: ["ignore", "pipe", "pipe"] },
      );
    } catch {
      done(undefined);
      return;
    }
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      done(undefined);
    }, timeoutMs);
    const take = (b: Buffer) => {
      out = (out + b.toString("utf8")).slice(-8000);
    };
    child.stdout?.on("data", take);
    child.stderr?.on("data", take);
    child.on("error", () => done(undefined));
    child.on("close", (code) => done(code === 0 ? (/PING (\S+)/.exec(out)?.[1] ?? "the npm registry") : undefined));
  });
}

/**
 * The error of a download whose source could not be reached (details.unreachable), with a hint
 * naming what works here instead; any other error as it is.
 */
export async function otherWays(e: CcbError, env: NodeJS.ProcessEnv, log?: Logger): Promise<CcbError> {
  const host = e.details?.unreachable;
  if (typeof host !== "string") return e;
  const hostPlatform = `${process.platform}-${process.arch}`;
  let csHere = false;
  try {
    csHere = codeServerPin(env).node[hostPlatform] !== undefined;
  } catch {
    csHere = false;
  }
  if (csHere) log?.info(`${host} is out of reach; asking your npm registry whether it answers (npm ping)`);
  const registry = csHere ? await npmRegistryAnswers(env) : undefined;
  const elsewhere =
    "a mirror of the release (--mirror <url>, CCB_RUNTIME_MIRROR) or the archive downloaded elsewhere (--from-file <archive>)";
  const hint = registry
    ? `${host} is out of reach from here, but your npm registry (${registry}) answers: \`ccb runtime fetch --runtime code-server\` installs code-server from it (a few minutes; it builds native modules). Or use ${elsewhere}.`
    : `Neither ${host} nor ${csHere ? "your npm registry (`npm ping`)" : "a code-server runtime for this platform"} is in reach: check the network or proxy (HTTPS_PROXY, npm's proxy setting), or use ${elsewhere}.`;
  return new CcbError(e.code, e.message, {
    hint,
    cause: e,
    details: { ...e.details, npmRegistry: registry ?? null },
  });
}
