import type { ProviderFlow } from '@/server/application/oidc/provider-flow';
import { readCookie } from '@/server/platform/cookies';
import { html } from '@/server/platform/html';
import { documentHtml, htmlResponse, type PageFrame } from './respond';

/**
 * The cookie that binds an identity provider's flow to the browser that brought its request:
 * scoped to the case's own path, so no other case's page ever sees it, and only readable by us.
 */
export const FLOW_COOKIE = 'vouch_flow';
/** What this browser holds of an identity provider's flow (the path keeps it to its case). */
export function readFlowBinding(request: Request): string | null {
  return readCookie(request.headers.get('cookie'), FLOW_COOKIE);
}

/**
 * The page a browser meets on a case an identity provider's flow opened, when it is not the
 * browser that started the flow: someone holding the link, or the person on another device.
 * Nothing of the case is shown or done; the way on is to start again from the sign-in.
 */
export function otherBrowserPage(frame: PageFrame, flow: ProviderFlow): Response {
  const { t } = frame;
  const title = t.text('flow.otherBrowser.title');
  const body = html`<main id="main"><h1>${title}</h1>
<p>${t.text('flow.otherBrowser.body', { application: flow.application })}</p></main>`;
  return htmlResponse(documentHtml({ title, body, frame }), { status: 403 });
}
