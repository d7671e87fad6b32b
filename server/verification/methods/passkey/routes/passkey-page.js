// The subject's passkey ceremonies (saving one on a closed case, proving one on a re-verification),
// after @simplewebauthn/browser's bundle in the same file (routes/passkey-script.ts joins them). No
// framework, no inline code: loaded with `defer` under a `script-src 'self'` policy, and only by a
// page that shows a ceremony. Without it, or without WebAuthn, the page's own words say what to do.
(() => {
  const webauthn = globalThis.SimpleWebAuthnBrowser;

  async function post(url, token, body) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': token },
      body: JSON.stringify(body ?? {}),
      credentials: 'same-origin',
      cache: 'no-store',
    });
    const answer = await response.json().catch(() => ({}));
    return { ok: response.ok, answer };
  }

  function wire(panel) {
    if (panel.dataset.wired) return;
    panel.dataset.wired = 'true';
    const button = panel.querySelector('.passkey-start');
    const message = panel.querySelector('.passkey-message');
    if (!button || !webauthn?.browserSupportsWebAuthn()) return;
    panel.querySelector('.passkey-unavailable')?.setAttribute('hidden', '');
    button.hidden = false;

    const say = (text) => {
      message.textContent = text;
      message.hidden = !text;
    };

    button.addEventListener('click', async () => {
      button.disabled = true;
      say('');
      const { token, start, finish, cancelled } = panel.dataset;
      try {
        const options = await post(start, token);
        // The server says where to go when the ceremony cannot run (the case moved on).
        if (!options.ok) return location.assign(options.answer.location ?? location.pathname);
        const ceremony =
          panel.dataset.passkey === 'save' ? webauthn.startRegistration : webauthn.startAuthentication;
        let response;
        try {
          response = await ceremony({ optionsJSON: options.answer.options });
        } catch {
          // Cancelled, timed out, or no passkey on this device: nothing was sent, try again.
          say(cancelled);
          return;
        }
        const result = await post(finish, token, { response });
        location.assign(result.answer.location ?? location.pathname);
      } catch {
        say(cancelled);
      } finally {
        button.disabled = false;
      }
    });
  }

  for (const panel of document.querySelectorAll('[data-passkey]')) wire(panel);
  // The live script swaps in a panel a refresh brings (the case just closed): wire it too.
  new MutationObserver(() => {
    for (const panel of document.querySelectorAll('[data-passkey]')) wire(panel);
  }).observe(document.body, { childList: true, subtree: true });
})();
