import { CcbError } from "../../../core/errors.ts";

/** How the MCP App shows the workbench: "default" = iframe with an honest browser fallback; "stream" = pixels over /stream. */
export type RenderMode = "default" | "stream";

/**
 * `--render-mode` / CCB_RENDER_MODE. Unset, empty or "default" is the iframe/browser behaviour;
 * "stream" opts in to the experimental pixel stream; anything else stops startup.
 */
export function parseRenderMode(value: string | undefined): RenderMode {
  const v = (value ?? "").trim();
  if (v === "" || v === "default") return "default";
  if (v === "stream") return "stream";
  throw new CcbError("CONFIG_INVALID", `Unknown render mode "${v.slice(0, 40)}" (--render-mode / CCB_RENDER_MODE).`, {
    hint: 'Use "default" (the workbench in an iframe, or a browser link when the host refuses frames) or "stream" (experimental pixel stream).',
  });
}
