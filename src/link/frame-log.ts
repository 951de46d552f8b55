import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { redact } from "../core/log.ts";

/** `--debug`: every frame, both ways, with tokens redacted and long frames cut. */
export class FrameLog {
  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    appendFileSync(path, "", { mode: 0o600 });
  }

  frame(connection: string, direction: string, text: string): void {
    const body = text.length > 4096 ? `${text.slice(0, 4096)}... (${text.length} bytes)` : text;
    appendFileSync(this.path, `${new Date().toISOString()} ${connection} ${direction} ${redact(body)}\n`);
  }

  event(connection: string, message: string): void {
    appendFileSync(this.path, `${new Date().toISOString()} ${connection} event ${redact(message)}\n`);
  }
}
