import type { Terminal as XTerm } from "@xterm/headless";
import xtermHeadless from "@xterm/headless";

// @xterm/headless is CommonJS: its default export carries the class under Node ESM and Bun alike.
const { Terminal } = xtermHeadless as unknown as { Terminal: typeof XTerm };

export interface ScreenOptions {
  cols: number;
  rows: number;
  /** Lines kept above the viewport. */
  scrollback: number;
  /** Output comes from pipes, not a PTY: translate `\n` to `\r\n`. */
  convertEol: boolean;
}

export interface ScreenSnapshot {
  /** Rendered text: the viewport, or scrollback plus viewport. Trailing spaces and blank lines trimmed. */
  text: string;
  /** Cursor position in the viewport (0-based). */
  cursor: { x: number; y: number };
  /** Whether a full-screen program switched to the alternate buffer. */
  alternate: boolean;
}

/**
 * The rendered screen of a terminal: its output is written into a headless xterm.js, which
 * interprets cursor movement, carriage returns, clears and the alternate buffer.
 */
export class HeadlessScreen {
  private readonly term: XTerm;
  private disposed = false;

  constructor(options: ScreenOptions) {
    this.term = new Terminal({
      cols: options.cols,
      rows: options.rows,
      scrollback: options.scrollback,
      convertEol: options.convertEol,
      allowProposedApi: true,
    });
  }

  /** Replies the emulator generates to queries (cursor position reports, device attributes). */
  onReply(listener: (data: string) => void): () => void {
    const d = this.term.onData(listener);
    return () => d.dispose();
  }

  write(data: string): void {
    if (!this.disposed) this.term.write(data);
  }

  resize(cols: number, rows: number): void {
    if (!this.disposed) this.term.resize(cols, rows);
  }

  /** Resolves once everything written so far has been parsed. */
  flush(): Promise<void> {
    if (this.disposed) return Promise.resolve();
    return new Promise((resolve) => this.term.write("", resolve));
  }

  async snapshot(scrollback: boolean): Promise<ScreenSnapshot> {
    await this.flush();
    const buf = this.term.buffer.active;
    const first = scrollback ? 0 : buf.baseY;
    const last = buf.baseY + this.term.rows;
    const lines: string[] = [];
    for (let y = first; y < last; y++) {
      const line = buf.getLine(y);
      if (!line) continue;
      const text = line.translateToString(false);
      // A wrapped line continues the previous one: join them back into one logical line.
      if (line.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
      else lines.push(text);
    }
    for (let i = 0; i < lines.length; i++) lines[i] = (lines[i] as string).trimEnd();
    while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
    return {
      text: lines.join("\n"),
      cursor: { x: buf.cursorX, y: buf.cursorY },
      alternate: buf.type === "alternate",
    };
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.term.dispose();
  }
}
