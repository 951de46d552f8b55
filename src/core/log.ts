/**
 * The core never writes to the console: it logs through this interface, injected by the CLI
 * (which writes to stderr or a file). Secrets must never be passed in here.
 */
export interface Logger {
  debug(message: string, ...args: unknown[]): void;
  info(message: string, ...args: unknown[]): void;
  warn(message: string, ...args: unknown[]): void;
  error(message: string, ...args: unknown[]): void;
  /** A logger whose lines are tagged with a component name. */
  child(tag: string): Logger;
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};

const SECRET_PATTERNS: RegExp[] = [
  /(authorization["']?\s*[:=]\s*["']?)(bearer\s+)?[^\s"',}]+/gi,
  /((?:token|authToken|secret|password|api[_-]?key)["']?\s*[:=]\s*["']?)[^\s"',}&]+/gi,
  /([?&](?:token|tkn|key)=)[^&\s"']+/gi,
  /(\/ide\/)[A-Za-z0-9_-]{16,}/g,
  /(rcs\.auth\.)[A-Za-z0-9_-]+/g,
  /\b(sk-ant-[A-Za-z0-9_-]{4})[A-Za-z0-9_-]+/g,
];

/** Remove tokens, keys and secret URL parts from a log line. */
export function redact(text: string): string {
  let out = text;
  for (const re of SECRET_PATTERNS) out = out.replace(re, (_m, keep: string) => `${keep}[redacted]`);
  return out;
}
