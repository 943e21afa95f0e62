/** A structured event: `msg` says what happened; the other fields locate it. */
export type LogEvent = { level?: 'debug' | 'info' | 'warn' | 'error'; msg: string } & Record<string, unknown>;
export type Logger = (event: LogEvent) => void;

export interface LoggerOptions {
  format: 'json' | 'pretty';
  /** Drop info and debug events. */
  quiet?: boolean;
  verbose?: boolean;
  /** Every occurrence of these strings is replaced before anything is written (the API key). */
  secrets?: readonly string[];
  write?: (line: string) => void;
}

/** Replaces every occurrence of the secrets (the API key) in a text; empty ones are ignored. */
export function redactor(secrets: readonly string[] = []): (text: string) => string {
  const masked = secrets.filter((s) => s.length > 0);
  return (text) => masked.reduce((t, s) => t.split(s).join('[redacted]'), text);
}

/** One line per event on stderr, JSON for machines or `level msg key=value` for people; secrets masked. */
export function createLogger(options: LoggerOptions): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const redact = redactor(options.secrets);
  return (event) => {
    const level = event.level ?? 'info';
    if (options.quiet && (level === 'info' || level === 'debug')) return;
    if (!options.verbose && level === 'debug') return;
    if (options.format === 'json') {
      write(redact(JSON.stringify({ time: new Date().toISOString(), ...event, level })));
      return;
    }
    const { msg, level: _, ...fields } = event;
    const rest = Object.entries(fields)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    write(redact(`${level.padEnd(5)} ${msg}${rest ? ` ${rest}` : ''}`));
  };
}

export const silentLogger: Logger = () => {};
