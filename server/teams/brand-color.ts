/**
 * WCAG 2.x contrast between two sRGB colours (`#rrggbb`): (L1 + 0.05) / (L2 + 0.05) of their
 * relative luminances, from 1 (the same) to 21 (black on white).
 * https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio
 */
export function contrastRatio(first: string, second: string): number {
  const [lighter, darker] = [relativeLuminance(first), relativeLuminance(second)].sort((a, b) => b - a) as [
    number,
    number,
  ];
  return (lighter + 0.05) / (darker + 0.05);
}

function relativeLuminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((at) => {
    const channel = Number.parseInt(hex.slice(at, at + 2), 16) / 255;
    return channel <= 0.04045 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG AA for normal text: the primary colour carries white text (buttons) and sits on white (links). */
export const MINIMUM_CONTRAST = 4.5;

/** What the primary colour meets on the pages: white text on it, and it on the white background. */
const PAGE_WHITE = '#ffffff';

/**
 * Why a primary colour cannot be used, or null when it can: `#rrggbb` only, and at least 4.5:1
 * against the white text it carries and the white page it sits on.
 */
export function brandColorProblem(color: string): string | null {
  if (!/^#[0-9a-f]{6}$/i.test(color)) return 'must be a colour written #rrggbb, such as #1f4fd1';
  const ratio = contrastRatio(color.toLowerCase(), PAGE_WHITE);
  if (ratio < MINIMUM_CONTRAST) {
    return `reaches only ${ratio.toFixed(2)}:1 contrast with the white text it carries and the white page background; WCAG AA needs ${MINIMUM_CONTRAST}:1, so choose a darker shade`;
  }
  return null;
}
