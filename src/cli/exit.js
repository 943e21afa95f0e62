// @ts-check
/** Exit codes of DESIGN.md. (Plain JavaScript: main.js uses it before the TypeScript loader exists.) */
export const EXIT = /** @type {const} */ ({
  ok: 0,
  failed: 1,
  usage: 2,
  partial: 3,
  locked: 75,
  interrupted: 130,
});
