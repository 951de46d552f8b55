/** Text for people (the CLI prints these; `--json` prints the objects instead). Pure functions. */
import type { CodeServerResult, FetchRuntimeResult, RuntimeStatus } from "./index.ts";

const MB = 1024 * 1024;

export function formatFetchResult(r: FetchRuntimeResult): string {
  const what = `OpenVSCode Server ${r.version} (${r.platform})`;
  if (r.status === "already-installed") return `${what} is already installed in ${r.root}\n`;
  const resumed = r.resumedBytes ? `, resumed at ${(r.resumedBytes / MB).toFixed(1)} MB` : "";
  return `Installed ${what} in ${r.root}\n  from ${r.from ?? r.source} (SHA-256 ${r.sha256} verified${resumed})\n`;
}

const IN_USE = {
  "openvscode-cache": "OpenVSCode Server from the cache",
  "openvscode-package": "OpenVSCode Server that ships with ccb (installed into the cache on first use, no download)",
  "code-server-cache": "code-server from the cache",
  none: "nothing: editor tools will say the workbench is unavailable",
} as const;

export function formatCodeServer(r: CodeServerResult): string {
  return r.status === "already-installed"
    ? `code-server ${r.version} is already installed in ${r.root}\n`
    : `Installed code-server ${r.version} (${r.platform}) in ${r.root}\n  with Node ${r.node} (npm integrity of both tarballs verified against ccb's pins)\n${r.log ? `  npm's output: ${r.log}\n` : ""}`;
}

export function formatStatus(s: RuntimeStatus): string {
  if (!s.supported) return `Runtime: unsupported platform ${s.platform}\n${s.message}\n${s.hint ? `${s.hint}\n` : ""}`;
  const lines = [
    `Runtime:   OpenVSCode Server ${s.version} (${s.platform})`,
    `Installed: ${s.installed ? "yes" : "no"}`,
    `Folder:    ${s.root}`,
    `Binary:    ${s.binary}`,
    `Archive:   ${s.archive.url}`,
    `           ${(s.archive.size / MB).toFixed(1)} MB, SHA-256 ${s.archive.sha256}`,
  ];
  lines.push(
    `Packaged:  ${s.packaged ? `${s.packaged.via} (${s.packaged.path})` : "none (this ccb carries no runtime)"}`,
  );
  if (s.partialBytes > 0)
    lines.push(`Partial:   ${(s.partialBytes / MB).toFixed(1)} MB downloaded; \`ccb runtime fetch\` resumes it`);
  lines.push(
    `code-server: ${s.codeServer ? `${s.codeServer.version} at ${s.codeServer.root} (Node at ${s.codeServer.node})` : "not installed (`ccb runtime fetch --runtime code-server` installs it from npm)"}`,
  );
  lines.push(`In use:    ${IN_USE[s.inUse]}`);
  if (s.inUse === "none")
    lines.push(
      "Run `ccb runtime fetch` to install it (behind a firewall: --mirror <url> or --from-file <archive>; with npm but no GitHub: --runtime code-server).",
    );
  return `${lines.join("\n")}\n`;
}
