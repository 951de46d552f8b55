/**
 * Bounds on everything a viewer may send: the stream is an input channel into a real browser. The
 * server enforces them (protocol.ts); the viewer's own script (viewer/client.ts) keeps within them.
 */
export const LIMITS = {
  maxWidth: 3840,
  maxHeight: 2160,
  minSize: 200,
  maxText: 4096,
  maxKey: 32,
  maxFrameBytes: 64 * 1024,
} as const;
