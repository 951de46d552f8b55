/** Text for people (the CLI prints these; `--json` prints the objects instead). Pure functions. */
import type { FetchRuntimeResult, RuntimeStatus } from "./index.ts";

const MB = 1024 * 1024;

export function formatFetchResult(r: FetchRuntimeResult): string {
  const what = `OpenVSCode Server ${r.version} (${r.platform})`;
  if (r.status === "already-installed") return `${what} is already installed in ${r.root}\n`;
  const resumed = r.resumedBytes ? `, resumed at ${(r.resumedBytes / MB).toFixed(1)} MB` : "";
  return `Installed ${what} in ${r.root}\n  from ${r.from ?? r.source} (SHA-256 ${r.sha256} verified${resumed})\n`;
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
  if (s.partialBytes > 0)
    lines.push(`Partial:   ${(s.partialBytes / MB).toFixed(1)} MB downloaded; \`ccb runtime fetch\` resumes it`);
  if (!s.installed)
    lines.push("Run `ccb runtime fetch` to install it (behind a firewall: --mirror <url> or --from-file <archive>).");
  return `${lines.join("\n")}\n`;
}
