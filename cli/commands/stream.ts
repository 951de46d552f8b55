import { defineCommand } from "citty";
import { startStream } from "../../src/stream/index.ts";
import { closeOnSignals, commonArgs, reportFatal, setupLogging } from "../common.ts";

export default defineCommand({
  meta: {
    name: "stream",
    description:
      "Stream a page (normally the workbench URL printed by `ccb serve` or `ccb ide`) from a headless\n" +
      "Chromium as JPEG frames over WebSocket, with mouse, wheel, keyboard and text input back, for hosts\n" +
      "that cannot embed the workbench. One viewer at a time; its own random token; loopback only.",
  },
  args: {
    url: {
      type: "string",
      description:
        "Page to stream (required), e.g. the workbench URL; `-` reads it from stdin (keeps a one-time link off the command line: `ccb workbench link | ccb stream --url -`)",
      valueHint: "url",
      required: true,
    },
    port: { type: "string", description: "Port (0 = any free port)", default: "0" },
    host: { type: "string", description: "Loopback address to bind", default: "127.0.0.1" },
    width: { type: "string", description: "Viewport width in CSS pixels", default: "1280" },
    height: { type: "string", description: "Viewport height in CSS pixels", default: "800" },
    fps: { type: "string", description: "Most frames per second sent to the viewer", default: "12" },
    quality: { type: "string", description: "JPEG quality 1-100", default: "60" },
    chromium: {
      type: "string",
      description: "Chromium/Chrome binary (env CHROME_PATH; default /usr/bin/chromium)",
      valueHint: "path",
    },
    "no-sandbox": {
      type: "boolean",
      description:
        "Last resort for containers: run Chromium without its sandbox (= CCB_CHROMIUM_NO_SANDBOX=1; as root ccb otherwise runs it as `nobody` / CCB_CHROMIUM_USER)",
    },
    ...commonArgs,
  },
  async run({ args }) {
    const { log } = setupLogging(args);
    const num = (v: string, name: string, min: number, max: number) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max)
        reportFatal(new Error(`--${name} must be an integer ${min}-${max}, not ${v}`));
      return n;
    };
    try {
      const url = args.url === "-" ? await firstLine(process.stdin) : args.url;
      if (!url) reportFatal(new Error("--url - read no URL from stdin"));
      const handle = await startStream({
        url,
        host: args.host,
        port: num(args.port, "port", 0, 65535),
        width: num(args.width, "width", 200, 3840),
        height: num(args.height, "height", 200, 2160),
        maxFps: num(args.fps, "fps", 1, 30),
        quality: num(args.quality, "quality", 1, 100),
        chromePath: args.chromium,
        noSandbox: args["no-sandbox"] === true || (args as Record<string, unknown>).sandbox === false,
        log: log.child("stream"),
      });
      process.stderr.write(
        `ccb stream: viewer ${handle.viewerUrl}\nccb stream: websocket ${handle.wsUrl} (token in ?token= or Authorization: Bearer)\n`,
      );
      closeOnSignals(handle);
    } catch (err) {
      reportFatal(err);
    }
  },
});

/** The first line of a stream (a URL piped in), trimmed. */
async function firstLine(input: NodeJS.ReadableStream): Promise<string> {
  let text = "";
  for await (const chunk of input) {
    text += String(chunk);
    if (text.includes("\n")) break;
  }
  return (text.split("\n")[0] ?? "").trim();
}
