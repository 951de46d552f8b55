import type { Logger } from "../core/log.ts";
import type { CdpSession } from "../platform/cdp-pipe.ts";
import type { ViewerMessage } from "./protocol.ts";

export interface ScreencastOptions {
  /** The page's DevTools session (src/platform/chromium.ts). */
  page: CdpSession;
  width: number;
  height: number;
  quality: number;
  maxFps: number;
  log: Logger;
}

const BUTTON_MASK = { none: 0, left: 1, right: 2, middle: 4 } as const;

/**
 * One page target driven over the Chrome DevTools Protocol: JPEG screencast frames (every frame
 * acked, at most `maxFps` forwarded) and bounded input. Only the commands below are ever sent:
 * a viewer cannot navigate the browser or issue arbitrary DevTools commands.
 */
export class Screencast {
  #client: CdpSession | undefined;
  #lastFrameAt = 0;
  #onFrame: ((jpeg: Buffer) => void) | undefined;
  #buttons = 0;
  #held: Buffer | undefined;
  #heldTimer: NodeJS.Timeout | undefined;
  width: number;
  height: number;

  constructor(readonly o: ScreencastOptions) {
    this.width = o.width;
    this.height = o.height;
  }

  async attach(): Promise<void> {
    const client = this.o.page;
    this.#client = client;
    await client.send("Page.enable");
    await this.#applySize();
    client.on("Page.screencastFrame", (params) => {
      const sessionId = params.sessionId as number;
      void client.send("Page.screencastFrameAck", { sessionId }).catch(() => {});
      // Skip frames rendered at a size we no longer emulate (in flight across a resize).
      const meta = params.metadata as { deviceWidth?: number; deviceHeight?: number } | undefined;
      if (
        meta?.deviceWidth &&
        meta.deviceHeight &&
        (Math.abs(meta.deviceWidth - this.width) > 1 || Math.abs(meta.deviceHeight - this.height) > 1)
      )
        return;
      this.#deliver(Buffer.from(params.data as string, "base64"));
    });
  }

  /**
   * At most maxFps frames a second, and never drop the latest one: a frame arriving too soon is
   * held and sent when the interval has passed (a static page sends no further frame, so a dropped
   * last frame, e.g. the first one after a resize, would leave the viewer on a stale picture).
   */
  #deliver(jpeg: Buffer): void {
    const wait = this.#lastFrameAt + 1000 / this.o.maxFps - performance.now();
    if (wait > 0) {
      this.#held = jpeg;
      this.#heldTimer ??= setTimeout(() => {
        this.#heldTimer = undefined;
        const held = this.#held;
        this.#held = undefined;
        if (held) this.#deliver(held);
      }, wait);
      return;
    }
    this.#lastFrameAt = performance.now();
    this.#onFrame?.(jpeg);
  }

  async start(onFrame: (jpeg: Buffer) => void): Promise<void> {
    this.#onFrame = onFrame;
    this.#lastFrameAt = 0;
    await this.#send("Page.startScreencast", {
      format: "jpeg",
      quality: this.o.quality,
      maxWidth: this.width,
      maxHeight: this.height,
    });
  }

  async stop(): Promise<void> {
    this.#onFrame = undefined;
    this.#held = undefined;
    if (this.#heldTimer) clearTimeout(this.#heldTimer);
    this.#heldTimer = undefined;
    await this.#send("Page.stopScreencast").catch(() => {});
  }

  async input(m: ViewerMessage): Promise<void> {
    switch (m.type) {
      case "resize":
        this.width = m.width;
        this.height = m.height;
        await this.#applySize();
        if (this.#onFrame) {
          await this.#send("Page.stopScreencast");
          await this.#send("Page.startScreencast", {
            format: "jpeg",
            quality: this.o.quality,
            maxWidth: this.width,
            maxHeight: this.height,
          });
        }
        return;
      case "pointer": {
        const type = m.action === "down" ? "mousePressed" : m.action === "up" ? "mouseReleased" : "mouseMoved";
        if (m.action === "down") this.#buttons |= BUTTON_MASK[m.button];
        if (m.action === "up") this.#buttons &= ~BUTTON_MASK[m.button];
        await this.#send("Input.dispatchMouseEvent", {
          type,
          x: Math.min(m.x, this.width),
          y: Math.min(m.y, this.height),
          button: m.action === "move" ? "none" : m.button,
          buttons: this.#buttons,
          clickCount: m.action === "move" ? 0 : m.clickCount,
          modifiers: m.modifiers,
        });
        return;
      }
      case "wheel":
        await this.#send("Input.dispatchMouseEvent", {
          type: "mouseWheel",
          x: m.x,
          y: m.y,
          deltaX: m.deltaX,
          deltaY: m.deltaY,
        });
        return;
      case "key":
        await this.#send("Input.dispatchKeyEvent", {
          type: m.action === "down" ? (m.text ? "keyDown" : "rawKeyDown") : "keyUp",
          key: m.key,
          code: m.code,
          ...(m.text ? { text: m.text } : {}),
          modifiers: m.modifiers,
        });
        return;
      case "text":
        await this.#send("Input.insertText", { text: m.text });
        return;
      default: {
        const never: never = m;
        throw new Error(`unhandled viewer message ${String(never)}`);
      }
    }
  }

  async close(): Promise<void> {
    await this.stop();
    this.#client = undefined;
  }

  async #applySize(): Promise<void> {
    await this.#send("Emulation.setDeviceMetricsOverride", {
      width: this.width,
      height: this.height,
      deviceScaleFactor: 1,
      mobile: false,
    });
  }

  async #send(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (!this.#client) throw new Error("the screencast is not attached");
    return this.#client.send(method, params);
  }
}
