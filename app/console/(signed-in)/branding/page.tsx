'use client';

import { useQuery } from '@tanstack/react-query';
import { type ChangeEvent, type FormEvent, useDeferredValue, useEffect, useRef, useState } from 'react';
import { useSession } from '@/app/console/_lib/session';
import { api, useQueryApi } from '@/app/console/_lib/trpc';
import { ErrorNote, Loading } from '@/app/console/_lib/ui';
import { LOCALE_CHOICES, type Locale } from '@/server/api/console/locale-vocabulary';

type Draft = {
  display_name: string;
  default_locale: Locale | null;
  brand_color: string;
  support_line: string;
};

/** The file as base64, for the JSON the console's API takes. */
function base64Of(file: File): Promise<string> {
  return file.arrayBuffer().then((buffer) => {
    let binary = '';
    const bytes = new Uint8Array(buffer);
    for (let at = 0; at < bytes.length; at += 0x8000) {
      binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
    }
    return btoa(binary);
  });
}

/**
 * A preview drawn whole: the frame grows to its document's height (a fixed height cut the sample
 * page). Sandboxed with no scripts; same-origin only so that this page can measure it.
 */
function PreviewFrame({ title, html }: { title: string; html: string }) {
  const frame = useRef<HTMLIFrameElement>(null);
  const [height, setHeight] = useState<number>();
  useEffect(() => {
    const element = frame.current;
    if (!element) return;
    let observer: ResizeObserver | undefined;
    const fitToDocument = () => {
      const root = element.contentDocument?.documentElement;
      if (!root) return;
      setHeight(root.scrollHeight);
      observer?.disconnect();
      observer = new ResizeObserver(() => setHeight(root.scrollHeight));
      observer.observe(root);
    };
    element.addEventListener('load', fitToDocument);
    fitToDocument();
    return () => {
      element.removeEventListener('load', fitToDocument);
      observer?.disconnect();
    };
  }, []);
  return (
    <iframe
      ref={frame}
      title={title}
      sandbox="allow-same-origin"
      srcDoc={html}
      className="c-preview-frame"
      style={height ? { height: `${height + 2}px` } : undefined}
    />
  );
}

/**
 * How the team appears to the people it verifies: the name, language, colour, support line and
 * logo on every page and mail they get, with a live preview drawn by the same renderers. Owners
 * and admins change it; every change is audited.
 */
export default function BrandingPage() {
  const { canManage } = useSession();
  const queries = useQueryApi();
  const current = useQuery(queries.team.branding.queryOptions());
  const [draft, setDraft] = useState<Draft | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [logoError, setLogoError] = useState<unknown>();
  const [saved, setSaved] = useState('');
  const stored = current.data;

  useEffect(() => {
    if (!stored) return;
    setDraft({
      display_name: stored.display_name ?? '',
      default_locale: stored.default_locale,
      brand_color: stored.brand_color ?? '',
      support_line: stored.support_line ?? '',
    });
  }, [stored]);

  const shown = useDeferredValue(draft);
  const preview = useQuery({
    ...queries.team.brandingPreview.queryOptions(
      shown ?? { display_name: '', default_locale: null, brand_color: '', support_line: '' },
    ),
    enabled: canManage && shown !== null,
    placeholderData: (previous) => previous,
  });

  function set<K extends keyof Draft>(key: K, value: Draft[K]) {
    setDraft((before) => (before ? { ...before, [key]: value } : before));
    setSaved('');
  }

  async function save(event: FormEvent) {
    event.preventDefault();
    if (!draft) return;
    setBusy(true);
    setError(undefined);
    try {
      await api.team.setBranding.mutate(draft);
      setSaved('Saved: new pages, mails and texts carry it.');
      current.refetch();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  async function changeLogo(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    event.target.value = '';
    if (!file) return;
    setLogoError(undefined);
    try {
      await api.team.uploadLogo.mutate({ file_base64: await base64Of(file) });
      await current.refetch();
      preview.refetch();
    } catch (err) {
      setLogoError(err);
    }
  }

  async function dropLogo() {
    setLogoError(undefined);
    try {
      await api.team.removeLogo.mutate();
      await current.refetch();
      preview.refetch();
    } catch (err) {
      setLogoError(err);
    }
  }

  return (
    <>
      <h1>Branding</h1>
      <p className="c-muted">
        What the people you verify, and their managers, see on every page, e-mail and text message: your name,
        your logo and colour, a line saying whom to ask, and the language they are addressed in when a case
        names none.
      </p>
      {current.isPending ? <Loading what="the branding" /> : null}
      <ErrorNote error={current.error} />
      {stored && !canManage ? (
        <dl className="c-facts">
          <dt>Name shown</dt>
          <dd>{stored.shown_name}</dd>
          <dt>Default language</dt>
          <dd>{LOCALE_CHOICES.find((c) => c.value === stored.default_locale)?.label ?? 'Not set'}</dd>
          <dt>Primary colour</dt>
          <dd>{stored.brand_color ?? 'Vouch’s blue'}</dd>
          <dt>Support line</dt>
          <dd>{stored.support_line ?? 'None'}</dd>
        </dl>
      ) : null}
      {stored && draft && canManage ? (
        <div className="c-branding">
          <div>
            <form onSubmit={save} className="c-form" noValidate>
              <label htmlFor="display-name">Name shown to people (at most 30 characters)</label>
              <input
                id="display-name"
                maxLength={30}
                placeholder={stored.shown_name}
                value={draft.display_name}
                onChange={(e) => set('display_name', e.target.value)}
              />
              <label htmlFor="default-locale">Default language</label>
              <select
                id="default-locale"
                value={draft.default_locale ?? ''}
                onChange={(e) => set('default_locale', (e.target.value || null) as Locale | null)}
              >
                <option value="">Not set (the service’s default)</option>
                {LOCALE_CHOICES.map((choice) => (
                  <option key={choice.value} value={choice.value}>
                    {choice.label}
                  </option>
                ))}
              </select>
              <label htmlFor="brand-color">Primary colour (#rrggbb; white text must be readable on it)</label>
              <div className="c-row">
                <input
                  type="color"
                  aria-label="Pick the primary colour"
                  value={/^#[0-9a-f]{6}$/i.test(draft.brand_color) ? draft.brand_color : '#1f4fd1'}
                  onChange={(e) => set('brand_color', e.target.value)}
                />
                <input
                  id="brand-color"
                  placeholder="#1f4fd1"
                  value={draft.brand_color}
                  onChange={(e) => set('brand_color', e.target.value)}
                />
              </div>
              <label htmlFor="support-line">Support line</label>
              <input
                id="support-line"
                maxLength={200}
                placeholder="Questions? Contact IT at +1 555 0100"
                value={draft.support_line}
                onChange={(e) => set('support_line', e.target.value)}
              />
              <ErrorNote error={error} />
              <p role="status" aria-live="polite" className="c-muted">
                {saved}
              </p>
              <div className="c-row">
                <button type="submit" className="c-button" disabled={busy}>
                  Save branding
                </button>
              </div>
            </form>
            <section aria-labelledby="logo-heading">
              <h2 id="logo-heading">Logo</h2>
              {stored.logo?.path ? (
                <p>
                  {/* biome-ignore lint/performance/noImgElement: the logo is already re-encoded and small; it is shown as subjects get it */}
                  <img src={stored.logo.path} alt="Your current logo" className="c-logo" />{' '}
                  {stored.logo.width} × {stored.logo.height} px
                </p>
              ) : (
                <p className="c-muted">No logo: pages show your name only.</p>
              )}
              <div className="c-form">
                <label htmlFor="logo-file">PNG, JPEG or WebP, at most 200 KB and 1024 × 1024 px</label>
                <input
                  id="logo-file"
                  type="file"
                  accept="image/png,image/jpeg,image/webp"
                  onChange={changeLogo}
                />
              </div>
              <ErrorNote error={logoError} />
              {stored.logo ? (
                <button type="button" className="c-button c-secondary" onClick={dropLogo}>
                  Remove logo
                </button>
              ) : null}
            </section>
          </div>
          <section aria-labelledby="preview-heading" className="c-preview">
            <h2 id="preview-heading">Preview</h2>
            <p className="c-muted">
              A sample case, drawn as your people will see it (not yet saved changes included).
            </p>
            <ErrorNote error={preview.error} />
            <PreviewFrame title="Preview of a verification page" html={preview.data?.page ?? ''} />
            <PreviewFrame title="Preview of the verification e-mail" html={preview.data?.mail ?? ''} />
          </section>
        </div>
      ) : null}
    </>
  );
}
