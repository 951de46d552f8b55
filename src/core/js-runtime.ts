/** The JavaScript runtime ccb runs on: Deno and Bun report a Node version too, so check them first. */
export function jsRuntime(): { name: "deno" | "bun" | "node"; version: string } {
  const deno = (globalThis as { Deno?: { version?: { deno?: string } } }).Deno;
  if (deno?.version?.deno) return { name: "deno", version: deno.version.deno };
  if (process.versions.bun) return { name: "bun", version: process.versions.bun };
  return { name: "node", version: process.versions.node };
}
