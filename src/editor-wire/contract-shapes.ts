import { z } from "zod";

/** The value shapes every block of the bridge contract uses (contract.ts re-exports them). */

export const Position = z.object({
  line: z.number().int().min(0).describe("Zero-based line."),
  character: z.number().int().min(0).describe("Zero-based character (UTF-16 code unit) in the line."),
});
export type Position = z.infer<typeof Position>;

export const Range = z.object({
  start: Position.describe("Start position (inclusive)."),
  end: Position.describe("End position (exclusive)."),
});
export type Range = z.infer<typeof Range>;

export const Selection = z.object({
  anchor: Position.describe("Where the selection starts (stays put when extending)."),
  active: Position.describe("Where the cursor is."),
});
export type Selection = z.infer<typeof Selection>;

export const Location = z.object({
  path: z.string().describe("Absolute path of the file."),
  range: Range,
});
export type Location = z.infer<typeof Location>;

export const SEVERITIES = ["error", "warning", "information", "hint"] as const;
export const Severity = z.enum(SEVERITIES);
export type Severity = z.infer<typeof Severity>;

export const Diagnostic = z.object({
  range: Range,
  severity: Severity,
  message: z.string(),
  source: z.string().optional(),
  code: z.union([z.string(), z.number()]).optional(),
});
export type Diagnostic = z.infer<typeof Diagnostic>;
