/** Exit codes of DESIGN.md. */
export const EXIT = { ok: 0, failed: 1, usage: 2, partial: 3, locked: 75, interrupted: 130 } as const;
