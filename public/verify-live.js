// Live progress for the verification page (no framework; loaded with `defer` under a strict CSP).
// Polls the small status route; when a step changed elsewhere (the e-mail link, the manager, an ID
// check finishing), it fetches the page again and swaps in only the parts that changed, so a form
// the subject is filling in is left alone, and announces the change to screen readers.
(() => {
  const main = document.querySelector('main[data-live]');
  if (!main?.dataset.live) return;
  const statusUrl = main.dataset.live;
  let version = main.dataset.version;
  let delay = 2000;
  // The page scripts a swapped-in part needs (the passkey's), loaded once each: a script element
  // that arrives with parsed HTML never runs by itself.
  const loaded = new Set([...document.querySelectorAll('script[data-page-script]')].map((s) => s.src));

  function loadPageScripts() {
    for (const inert of main.querySelectorAll('script[data-page-script]')) {
      if (loaded.has(inert.src)) continue;
      loaded.add(inert.src);
      const script = document.createElement('script');
      script.src = inert.src;
      document.head.append(script);
    }
  }

  function announce(text) {
    const live = document.getElementById('live');
    if (live) live.textContent = text;
  }

  async function refresh() {
    const response = await fetch(location.pathname, {
      headers: { Accept: 'text/html' },
      cache: 'no-store',
      redirect: 'manual',
    });
    // The ended case of an identity provider's flow sends the browser back to it: go there.
    if (response.type === 'opaqueredirect') return location.reload();
    if (!response.ok) return;
    const next = new DOMParser().parseFromString(await response.text(), 'text/html').querySelector('main');
    if (!next) return;
    const messages = [];
    if (next.dataset.status !== main.dataset.status) {
      for (const id of ['case-summary']) {
        const fresh = next.querySelector(`#${id}`);
        const current = document.getElementById(id);
        if (fresh && current) current.replaceWith(fresh);
      }
      main.dataset.status = next.dataset.status;
      messages.push(next.querySelector('#case-summary')?.textContent?.trim() ?? '');
    }
    for (const fresh of next.querySelectorAll('[data-step]')) {
      const current = main.querySelector(`[data-step="${fresh.dataset.step}"]`);
      if (!current || current.dataset.state === fresh.dataset.state) continue;
      current.replaceWith(fresh);
      messages.unshift(
        `${fresh.querySelector('h2')?.textContent ?? ''}: ${fresh.querySelector('.state-text')?.textContent ?? ''}`,
      );
    }
    // A finished case takes no more input anywhere on the page.
    if (next.dataset.status !== 'open') {
      for (const form of main.querySelectorAll('form')) form.remove();
    }
    main.dataset.version = next.dataset.version;
    loadPageScripts();
    announce(messages.filter(Boolean).join('. '));
  }

  async function tick() {
    try {
      const response = await fetch(statusUrl, { headers: { Accept: 'application/json' }, cache: 'no-store' });
      if (response.ok) {
        const state = await response.json();
        if (state.version !== version) {
          version = state.version;
          await refresh();
        }
        if (state.status !== 'open') return;
        delay = 2000;
      }
    } catch {
      delay = Math.min(delay * 2, 30000);
    }
    setTimeout(tick, document.hidden ? Math.max(delay, 10000) : delay);
  }

  setTimeout(tick, delay);
})();
