/**
 * How to start this same ccb again as a child process (e.g. `ccb acp` behind `ccb link`):
 * the compiled binary is its own entry; under Node (or `bun run`) the script path is argv[1].
 */
export function selfCommand(args: string[]): { command: string; args: string[] } {
  const script = process.argv[1];
  const compiled =
    typeof (globalThis as { Bun?: unknown }).Bun !== "undefined" &&
    (!script || script.startsWith("/$bunfs/") || script.startsWith("B:/~BUN/"));
  if (compiled || !script) return { command: process.execPath, args };
  return {
    command: process.execPath,
    args: [...process.execArgv.filter((a) => !a.startsWith("--inspect")), script, ...args],
  };
}
