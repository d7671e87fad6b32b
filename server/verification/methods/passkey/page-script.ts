import { type Html, html } from '@/server/platform/html';

/**
 * The pages' one passkey script (served at this path: the browser package's bundle and our few
 * lines, server/verification/methods/passkey/routes/passkey-script.ts), loaded only by a page
 * that shows a passkey ceremony.
 */
export const PASSKEY_SCRIPT_PATH = '/verify-passkey.js';

/**
 * A ceremony's panel: the button the script shows and runs (it asks `start` for the options, runs
 * the browser's prompt, sends the answer to `finish` and goes where that answer says), and what a
 * page without the script, or a browser without passkeys, says instead. `data-page-script` lets
 * the live script load the script when a refresh brings the panel in.
 */
export function passkeyCeremonyPanel(input: {
  ceremony: 'prove' | 'save';
  start: string;
  finish: string;
  csrf: string;
  button: string;
  unavailable: string;
  cancelled: string;
}): Html {
  return html`<div class="passkey" data-passkey="${input.ceremony}" data-start="${input.start}" data-finish="${input.finish}" data-token="${input.csrf}" data-cancelled="${input.cancelled}">
<button type="button" class="passkey-start" hidden>${input.button}</button>
<p class="hint passkey-unavailable">${input.unavailable}</p>
<p class="hint passkey-message" role="alert" hidden></p>
<script src="${PASSKEY_SCRIPT_PATH}" defer data-page-script></script></div>`;
}
