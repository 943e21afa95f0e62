// @ts-check

/**
 * The columns a string takes in a terminal, for yargs's help pages: the built CLI uses this in place of
 * the `string-width` package (scripts/build.ts), of which yargs, cliui and wrap-ansi each bundle a copy.
 *
 * Why: each copy builds an Intl.Segmenter and Unicode-property regular expressions as it loads, and
 * `\p{RGI_Emoji}` alone takes 35 ms to compile: 55 ms of every avalake command's start-up, `--version`
 * included, for help pages whose text is avalake's own English. This counts code points: none for
 * control characters, combining marks and zero-width ones, two for East Asian wide and fullwidth ones
 * and for emoji, one otherwise. ANSI escape sequences take no columns unless counted on purpose. Unlike
 * the package it does not join grapheme clusters: an emoji sequence joined by U+200D counts each emoji.
 */

// OSC sequences (hyperlinks, titles), then CSI sequences (colours, cursor moves), as terminals read them.
const ANSI =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are what is matched
  /\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|[\u001b\u009b][[\]()#;?]*(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PR-TZcf-nq-uy=><~]/g;

/** Ranges (inclusive) of code points two columns wide: East Asian Wide and Fullwidth, and emoji. */
const WIDE = [
  [0x1100, 0x115f],
  [0x231a, 0x231b],
  [0x2329, 0x232a],
  [0x23e9, 0x23ec],
  [0x23f0, 0x23f0],
  [0x23f3, 0x23f3],
  [0x25fd, 0x25fe],
  [0x2614, 0x2615],
  [0x2648, 0x2653],
  [0x267f, 0x267f],
  [0x2693, 0x2693],
  [0x26a1, 0x26a1],
  [0x26aa, 0x26ab],
  [0x26bd, 0x26be],
  [0x26c4, 0x26c5],
  [0x26ce, 0x26ce],
  [0x26d4, 0x26d4],
  [0x26ea, 0x26ea],
  [0x26f2, 0x26f3],
  [0x26f5, 0x26f5],
  [0x26fa, 0x26fa],
  [0x26fd, 0x26fd],
  [0x2705, 0x2705],
  [0x270a, 0x270b],
  [0x2728, 0x2728],
  [0x274c, 0x274c],
  [0x274e, 0x274e],
  [0x2753, 0x2755],
  [0x2757, 0x2757],
  [0x2795, 0x2797],
  [0x27b0, 0x27b0],
  [0x27bf, 0x27bf],
  [0x2b1b, 0x2b1c],
  [0x2b50, 0x2b50],
  [0x2b55, 0x2b55],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xa960, 0xa97f],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x16fe0, 0x18cff],
  [0x1b000, 0x1b2ff],
  [0x1f004, 0x1f004],
  [0x1f0cf, 0x1f0cf],
  [0x1f18e, 0x1f18e],
  [0x1f191, 0x1f19a],
  [0x1f200, 0x1f251],
  [0x1f300, 0x1f64f],
  [0x1f680, 0x1f6ff],
  [0x1f7e0, 0x1f7eb],
  [0x1f90c, 0x1f9ff],
  [0x1fa70, 0x1faff],
  [0x20000, 0x3fffd],
];

/** @param {number} code */
function isWide(code) {
  if (code < 0x1100) return false;
  for (const [from, to] of WIDE) {
    if (code < /** @type {number} */ (from)) return false;
    if (code <= /** @type {number} */ (to)) return true;
  }
  return false;
}

/** @param {number} code */
const isZeroWidth = (code) =>
  code <= 0x1f ||
  (code >= 0x7f && code <= 0x9f) ||
  (code >= 0x300 && code <= 0x36f) || // combining diacritical marks
  (code >= 0x1ab0 && code <= 0x1aff) ||
  (code >= 0x1dc0 && code <= 0x1dff) ||
  (code >= 0x200b && code <= 0x200f) || // zero-width space, joiners, direction marks
  (code >= 0x20d0 && code <= 0x20ff) ||
  (code >= 0xfe00 && code <= 0xfe0f) || // variation selectors
  (code >= 0xfe20 && code <= 0xfe2f) ||
  code === 0xfeff;

/**
 * @param {unknown} text
 * @param {{ countAnsiEscapeCodes?: boolean }} [options]
 * @returns {number}
 */
export default function stringWidth(text, options = {}) {
  if (typeof text !== 'string' || text.length === 0) return 0;
  const plain = options.countAnsiEscapeCodes ? text : text.replace(ANSI, '');
  // Printable ASCII, nearly every line of a help page: one column a character.
  if (/^[\x20-\x7e]*$/.test(plain)) return plain.length;
  let width = 0;
  for (const character of plain) {
    const code = /** @type {number} */ (character.codePointAt(0));
    if (isZeroWidth(code)) continue;
    width += isWide(code) ? 2 : 1;
  }
  return width;
}
