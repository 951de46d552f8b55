import { z } from "zod";
import { LIMITS } from "./limits.ts";

const coord = z.number().finite().min(0).max(10_000);
const modifiers = z.number().int().min(0).max(15).default(0);

export const viewerMessageSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("resize"),
    width: z.number().int().min(LIMITS.minSize).max(LIMITS.maxWidth),
    height: z.number().int().min(LIMITS.minSize).max(LIMITS.maxHeight),
  }),
  z.object({
    type: z.literal("pointer"),
    action: z.enum(["down", "up", "move"]),
    x: coord,
    y: coord,
    button: z.enum(["none", "left", "middle", "right"]).default("left"),
    clickCount: z.number().int().min(0).max(3).default(1),
    modifiers,
  }),
  z.object({
    type: z.literal("wheel"),
    x: coord,
    y: coord,
    deltaX: z.number().finite().min(-10_000).max(10_000),
    deltaY: z.number().finite().min(-10_000).max(10_000),
  }),
  z.object({
    type: z.literal("key"),
    action: z.enum(["down", "up"]),
    key: z.string().min(1).max(LIMITS.maxKey),
    code: z.string().max(LIMITS.maxKey).default(""),
    text: z.string().max(8).optional(),
    modifiers,
  }),
  z.object({ type: z.literal("text"), text: z.string().min(1).max(LIMITS.maxText) }),
]);
export type ViewerMessage = z.infer<typeof viewerMessageSchema>;
/** What a viewer may send (the defaults filled in on arrival may be left out): viewer/client.ts sends these. */
export type ViewerInput = z.input<typeof viewerMessageSchema>;

/** Server -> viewer text messages; frames themselves are binary JPEG messages. */
export type StreamEvent =
  | { type: "hello"; width: number; height: number; maxFps: number }
  | { type: "error"; message: string }
  | { type: "resized"; width: number; height: number };
