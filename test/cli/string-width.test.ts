import packageWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import stringWidth from '../../src/cli/string-width.js';

describe('the string width the built CLI measures help pages with', () => {
  it('agrees with the string-width package on text, escape codes, wide, combining and zero-width characters', () => {
    const samples = [
      '',
      'Data directory (default data), or s3://bucket/prefix for a lake on object storage',
      'postgres://… (AVALAKE_CATALOG)',
      'the network’s public node',
      '\u001b[31mred\u001b[39m and \u001b[1mbold\u001b[22m',
      '\u001b]8;;https://example.com\u0007link\u001b]8;;\u0007',
      '漢字とかな',
      'ＡＢＣ fullwidth',
      '한국어',
      'e\u0301 combining',
      'zero\u200bwidth\ufeff',
      'tab\tand\nnewline',
      '🚀 ⛰ ⛵ ✅',
      '𠀀 beyond the basic plane',
    ];
    for (const text of samples) expect(stringWidth(text), JSON.stringify(text)).toBe(packageWidth(text));
    expect(stringWidth('\u001b[31mred\u001b[39m', { countAnsiEscapeCodes: true })).toBe(
      packageWidth('\u001b[31mred\u001b[39m', { countAnsiEscapeCodes: true }),
    );
    expect(stringWidth(undefined)).toBe(0);
  });
});
