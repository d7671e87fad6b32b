import { createHash } from 'node:crypto';

/**
 * The pages' only stylesheet, inlined (no extra request before first paint) and allowed by its
 * hash in the CSP, so no 'unsafe-inline' is needed. Colours meet WCAG AA contrast on white.
 */
export const PAGE_CSS = `
:root{--fg:#14171f;--muted:#4a5163;--bg:#fff;--panel:#f5f6f8;--accent:#1f4fd1;--ok:#0b6b2e;--bad:#a4161a;--border:#c9ced8;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
*{box-sizing:border-box}
body{margin:0;line-height:1.5;font-size:1.0625rem;overflow-wrap:anywhere}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
.skip{position:absolute;inset-inline-start:-999px}.skip:focus{inset-inline-start:1rem;top:1rem;background:#fff;padding:.5rem}
header.site{border-bottom:1px solid var(--border);padding:.75rem 1rem;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem .75rem}
.brand-name{font-weight:700}
.logo{max-height:2.5rem;max-width:10rem;width:auto;height:auto}
.language{margin-inline-start:auto;color:var(--accent);font-size:.875rem}
ul.languages{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
ul.languages a{color:var(--accent);display:inline-block;padding:.5rem 0}
ul.languages [aria-current]{color:var(--fg);font-weight:700;text-decoration:none}
main{max-width:36rem;margin:0 auto;padding:1.25rem 1rem 3rem}
h1{font-size:1.5rem;line-height:1.25;margin:.5rem 0 1rem}
h2{font-size:1.125rem;margin:0 0 .25rem}
ol.steps{list-style:none;padding:0;margin:1.5rem 0}
ol.steps>li{border:1px solid var(--border);border-radius:8px;padding:1rem;margin:0 0 1rem}
.state{font-weight:600;margin:0 0 .5rem}
.state-verified{color:var(--ok)}.state-failed{color:var(--bad)}.state-pending{color:var(--muted)}.state-ended{color:var(--muted)}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
.hint{color:var(--muted);font-size:.9375rem;margin:.25rem 0}
input[type=text],input[type=tel],input:not([type]){width:100%;font:inherit;padding:.625rem;border:2px solid var(--muted);border-radius:6px}
input[type=file]{font:inherit;max-width:100%}
[hidden]{display:none!important}
button,.button{display:inline-block;font:inherit;font-weight:600;margin-top:.75rem;padding:.625rem 1.25rem;border-radius:6px;border:2px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer;text-decoration:none}
button.secondary{background:#fff;color:var(--accent)}
button.danger{background:#fff;color:var(--bad);border-color:var(--bad)}
:focus-visible{outline:3px solid #b35c00;outline-offset:2px}
.notice{border-inline-start:4px solid var(--accent);background:var(--panel);padding:.75rem 1rem;margin:1rem 0}
.notice.error{border-color:var(--bad)}
.notice:empty{display:none}
.test-mode{background:#e8f1ff;color:#0b3a75;border:1px solid #9cc0f0;border-radius:6px;padding:.25rem .75rem;font-size:.875rem}
.demo{background:#fff6d6;color:#4a3b00;border:1px solid #e6d48a;border-radius:6px;padding:.25rem .75rem;font-size:.875rem}
.summary{font-size:1.125rem}
details{margin-top:.75rem}
footer{color:var(--muted);font-size:.875rem;max-width:36rem;margin:0 auto;padding:0 1rem 2rem}
`.trim();

function cspHash(css: string): string {
  return `sha256-${createHash('sha256').update(css).digest('base64')}`;
}

export const PAGE_CSS_HASH = cspHash(PAGE_CSS);

/**
 * The one line that gives a page its team's primary colour (buttons, links, accents), allowed by
 * its own hash: the colour is `#rrggbb` (the database holds no other shape), checked for contrast
 * when the team set it. Hashed per page (a few microseconds): a cache keyed by colour would grow
 * with every colour the console's preview is asked to draw.
 */
export function brandStylesheet(color: string): { css: string; hash: string } {
  const css = `:root{--accent:${/^#[0-9a-f]{6}$/i.test(color) ? color : '#1f4fd1'}}`;
  return { css, hash: cspHash(css) };
}
