/// <reference lib="dom" />
import { ccbStream } from "./client.ts";

/**
 * The stream client for the MCP App document (src/protocols/mcp/app/app-html.ts): defines the global
 * `ccbStream(options)` its view (src/protocols/mcp/app/view/main.ts) calls for the stream tier.
 */
(window as Window & { ccbStream?: typeof ccbStream }).ccbStream = ccbStream;
