/**
 * Whether a process with this pid exists (EPERM: it exists but belongs to another user). The one
 * pid check of ccb; process-tree.ts adds "and is not a zombie" where reaping matters.
 */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
