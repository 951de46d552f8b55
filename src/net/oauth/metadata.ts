import type { Gateway } from "../gateway.ts";
import { sendJson } from "../respond.ts";
import { type OAuthGuard, PRM_PATH } from "./guard.ts";

/**
 * Serve the Protected Resource Metadata (RFC 9728) of `guard`'s resource at the well-known URL
 * with the resource's path appended (`/.well-known/oauth-protected-resource/mcp`, what the
 * `resource_metadata` of a challenge names) and at the bare well-known URL, which clients try when a
 * challenge names none. No credential; Host and Origin are checked like every route of the gateway.
 */
export function mountProtectedResourceMetadata(gateway: Gateway, guard: OAuthGuard, path: string): void {
  for (const at of [`${PRM_PATH}${path}`, PRM_PATH]) {
    gateway.addRoute(
      "GET",
      at,
      (_req, res, url) => {
        if (url.pathname !== at) return sendJson(res, 404, { error: "Not found." });
        sendJson(res, 200, guard.document(), { "cache-control": "public, max-age=300" });
      },
      { name: "oauth-protected-resource", origin: { kind: "same" }, auth: [] },
    );
  }
}
