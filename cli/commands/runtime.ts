import { defineCommand } from "citty";
import { CcbError } from "../../src/core/errors.ts";
import { formatCodeServer, formatFetchResult, formatStatus } from "../../src/runtime-fetch/format.ts";
import {
  cachedCodeServer,
  createProgress,
  fetchCodeServer,
  fetchRuntime,
  runtimeStatus,
} from "../../src/runtime-fetch/index.ts";
import { commonArgs, reportFatal, setupLogging } from "../common.ts";

const platformArg = {
  type: "string",
  description: "Runtime platform: linux-x64, linux-arm64 or linux-armhf (default: this machine's)",
  valueHint: "platform",
} as const;
const runtimeArg = {
  type: "string",
  description:
    "Which runtime: openvscode (default: the pinned OpenVSCode Server release) or code-server (from the npm registry, with its Node 24)",
  valueHint: "openvscode|code-server",
} as const;

function runtimeKind(v: unknown): "openvscode" | "code-server" {
  if (v === undefined || v === "openvscode" || v === "code-server")
    return (v ?? "openvscode") as "openvscode" | "code-server";
  throw new CcbError("INVALID_ARGUMENT", `--runtime takes openvscode or code-server, not ${String(v)}.`);
}

const jsonArg = { type: "boolean", description: "Print one JSON object on stdout (no progress output)" } as const;

/** With --json, failures are JSON on stdout too; otherwise a message for a person on stderr. */
function fail(err: unknown, json: boolean): never {
  if (json) {
    const e =
      err instanceof CcbError ? err.toJSON() : { code: "INTERNAL", message: (err as Error)?.message ?? String(err) };
    process.stdout.write(`${JSON.stringify({ ok: false, error: e })}\n`);
    process.exit(1);
  }
  reportFatal(err);
}

const fetchCommand = defineCommand({
  meta: {
    name: "fetch",
    description:
      "Download, verify (size + SHA-256) and install the runtime into the cache; nothing is extracted unless the hash matches",
  },
  args: {
    runtime: runtimeArg,
    platform: platformArg,
    mirror: {
      type: "string",
      description:
        "Base URL of a GitHub-releases mirror; fetches <mirror>/<release tag>/<asset file name> (env CCB_RUNTIME_MIRROR)",
      valueHint: "url",
    },
    "from-file": {
      type: "string",
      description: "Install from an offline copy of the release archive (still hash-checked)",
      valueHint: "archive",
    },
    force: { type: "boolean", description: "Download and install again even when installed" },
    json: jsonArg,
    ...commonArgs,
  },
  async run({ args }) {
    const json = args.json === true;
    const { log } = setupLogging({ ...args, "log-level": args["log-level"] ?? (json ? "warn" : undefined) });
    const progress = json ? undefined : createProgress(process.stderr, "ccb runtime fetch");
    const runtimeLog = progress ? progress.around(log.child("runtime")) : log.child("runtime");
    const ac = new AbortController();
    const onSignal = () => ac.abort();
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    try {
      if (runtimeKind(args.runtime) === "code-server") {
        if (args.mirror || args["from-file"] || args.platform)
          throw new CcbError(
            "INVALID_ARGUMENT",
            "--mirror, --from-file and --platform are for OpenVSCode; code-server comes from your npm registry (npm's own configuration).",
          );
        const r = await fetchCodeServer({
          force: args.force === true,
          signal: ac.signal,
          log: runtimeLog,
          onProgress: progress ? (p) => progress.update(p) : undefined,
        });
        progress?.end();
        process.stdout.write(json ? `${JSON.stringify({ ok: true, ...r })}\n` : formatCodeServer(r));
        return;
      }
      const r = await fetchRuntime({
        platform: args.platform,
        mirror: args.mirror,
        fromFile: args["from-file"],
        force: args.force === true,
        signal: ac.signal,
        log: runtimeLog,
        onProgress: progress ? (p) => progress.update(p) : undefined,
      });
      progress?.end();
      process.stdout.write(json ? `${JSON.stringify({ ok: true, ...r })}\n` : formatFetchResult(r));
    } catch (err) {
      progress?.end();
      fail(err, json);
    }
  },
});

const statusCommand = defineCommand({
  meta: {
    name: "status",
    description: "Show the pinned runtime, whether it is installed, and where (exit 0 either way)",
  },
  args: { platform: platformArg, json: jsonArg, ...commonArgs },
  async run({ args }) {
    const json = args.json === true;
    try {
      const s = await runtimeStatus({ platform: args.platform });
      process.stdout.write(json ? `${JSON.stringify(s)}\n` : formatStatus(s));
    } catch (err) {
      fail(err, json);
    }
  },
});

const pathCommand = defineCommand({
  meta: {
    name: "path",
    description: "Print the installed runtime's folder (or --binary: its executable); exit 1 when not installed",
  },
  args: {
    runtime: runtimeArg,
    platform: platformArg,
    binary: {
      type: "boolean",
      description: "Print the path of bin/openvscode-server (code-server: its Node 24) instead of the folder",
    },
    json: jsonArg,
    ...commonArgs,
  },
  async run({ args }) {
    const json = args.json === true;
    try {
      if (runtimeKind(args.runtime) === "code-server") {
        const cs = cachedCodeServer();
        if (!cs)
          throw new CcbError("RUNTIME_UNAVAILABLE", "code-server is not installed in ccb's cache.", {
            hint: "Run `ccb runtime fetch --runtime code-server` first.",
          });
        process.stdout.write(
          json
            ? `${JSON.stringify({ ok: true, root: cs.root, binary: cs.node })}\n`
            : `${args.binary ? cs.node : cs.root}\n`,
        );
        return;
      }
      const s = await runtimeStatus({ platform: args.platform });
      if (!s.supported) throw new CcbError("UNSUPPORTED", s.message, { hint: s.hint });
      if (!s.installed) {
        throw new CcbError(
          "RUNTIME_UNAVAILABLE",
          `OpenVSCode Server ${s.version} (${s.platform}) is not installed (expected in ${s.root}).`,
          {
            hint: "Run `ccb runtime fetch` first.",
          },
        );
      }
      process.stdout.write(
        json
          ? `${JSON.stringify({ ok: true, root: s.root, binary: s.binary })}\n`
          : `${args.binary ? s.binary : s.root}\n`,
      );
    } catch (err) {
      fail(err, json);
    }
  },
});

export default defineCommand({
  meta: {
    name: "runtime",
    description:
      "Fetch and inspect the workbench runtime: the pinned OpenVSCode Server (1.109.5; linux-x64, linux-arm64, linux-armhf),\n" +
      "which the npm packages and release tarballs already carry, or code-server from the npm registry (--runtime code-server).\n" +
      "Env: CCB_CACHE_DIR (cache root; default $XDG_CACHE_HOME/ccb or ~/.cache/ccb), CCB_RUNTIME_MIRROR (mirror base URL),\n" +
      "CCB_RUNTIME_MANIFEST (testing/advanced: a JSON manifest replacing the pinned one).",
  },
  subCommands: { fetch: fetchCommand, status: statusCommand, path: pathCommand },
});
