/**
 * Where a world's history begins. By default it is `historyDays` before the UTC day the clock starts on,
 * so a fixed clock always gives the same world; but then an emulator restarted on a later day begins a
 * later history, every record's time shifted. Passing the genesis of the first start (`--genesis`)
 * continues that world instead: the same records at the same times, as if the clock had run on.
 */

const DAY = 86_400;

export function defaultGenesis(clockStart: number, historyDays: number): number {
  return Math.floor(clockStart / DAY) * DAY - historyDays * DAY;
}

/** A genesis as the CLI prints it and takes it back: its UTC day, e.g. "2026-10-03". */
export function genesisDay(genesis: number): string {
  return new Date(genesis * 1000).toISOString().slice(0, 10);
}

const EXPECTED =
  'a UTC date (YYYY-MM-DD) or the Unix seconds of a UTC midnight, e.g. 2026-10-03 or 1790985600';

/** "YYYY-MM-DD" (a UTC day) or Unix seconds at a UTC midnight; throws naming --genesis otherwise. */
export function parseGenesis(spec: string | number): number {
  const text = String(spec).trim();
  let seconds = Number.NaN;
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const ms = Date.parse(`${text}T00:00:00Z`);
    // Date.parse rolls 2026-02-30 over to March; a date that does not print back as given is not one.
    if (!Number.isNaN(ms) && new Date(ms).toISOString().startsWith(text)) seconds = ms / 1000;
  } else if (/^\d+$/.test(text)) {
    seconds = Number(text);
    if (seconds % DAY !== 0)
      throw new Error(
        `--genesis: ${text} is not a UTC midnight (a world's days start at 00:00 UTC); expected ${EXPECTED}`,
      );
  }
  if (!Number.isSafeInteger(seconds)) throw new Error(`--genesis: expected ${EXPECTED}, got "${text}"`);
  return seconds;
}

/** A world cannot begin after the day its clock starts on: it would have no past to serve. */
export function checkGenesis(genesis: number, clockStart: number): void {
  const clockDay = Math.floor(clockStart / DAY) * DAY;
  if (genesis > clockDay)
    throw new Error(
      `--genesis: ${genesisDay(genesis)} is after the clock's day (${genesisDay(clockDay)}); ` +
        'pass the day the world began, which is on or before it (the emulator prints it as it starts)',
    );
}
