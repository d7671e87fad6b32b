import { describe, expect, it } from 'vitest';
import { brandColorProblem, contrastRatio } from './brand-color';

describe('contrastRatio', () => {
  it('is 21 for black on white and 1 for a colour on itself, either way round', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrastRatio('#ffffff', '#000000')).toBeCloseTo(21, 5);
    expect(contrastRatio('#1f4fd1', '#1f4fd1')).toBe(1);
  });

  it('matches published WCAG figures', () => {
    // #767676 on white is the classic lightest grey that passes AA (4.54:1); #777777 fails (4.48:1).
    expect(contrastRatio('#767676', '#ffffff')).toBeCloseTo(4.54, 2);
    expect(contrastRatio('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
  });
});

describe('brandColorProblem', () => {
  it('accepts a colour dark enough for white text, in either case', () => {
    expect(brandColorProblem('#1f4fd1')).toBeNull();
    expect(brandColorProblem('#767676')).toBeNull();
    expect(brandColorProblem('#0B6B2E')).toBeNull();
  });

  it('refuses a light colour, saying the ratio it reaches and the one it needs', () => {
    expect(brandColorProblem('#777777')).toMatch(/^reaches only 4\.48:1 contrast .* needs 4\.5:1/);
    expect(brandColorProblem('#ffcc00')).toMatch(/^reaches only 1\.\d\d:1/);
  });

  it('refuses anything but #rrggbb', () => {
    for (const value of ['red', '#fff', '1f4fd1', '#1f4fd1ff', 'rgb(0,0,0)', '#1f4fdz', '']) {
      expect(brandColorProblem(value), value).toMatch(/^must be a colour written #rrggbb/);
    }
  });
});
