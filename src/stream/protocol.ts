import { z } from "zod";

/** Bounds on everything a viewer may send: the stream is an input channel into a real browser. */
export const LIMITS = {
  maxWidth: 3840,
  maxHeight: 2160,
  minSize: 200,
  maxText: 4096,
  maxKey: 32,
  maxFrameBytes: 64 * 1024,
} as const;

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

/** Server -> viewer text messages; frames themselves are binary JPEG messages. */
export type StreamEvent =
  | { type: "hello"; width: number; height: number; maxFps: number }
  | { type: "error"; message: string }
  | { type: "resized"; width: number; height: number };
