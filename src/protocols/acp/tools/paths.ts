import { isAbsolute, resolve } from "node:path";

/** The absolute form of a tool's path argument (for locations; confinement happens in ClientIO.resolve). */
export function absPath(cwd: string, p: string): string {
  return isAbsolute(p) ? resolve(p) : resolve(cwd, p);
}
