'use client';

import { CopyButton } from '@/app/console/_lib/ui';

/** A signing secret shown once (after create, rotate or a password-checked reveal). */
export function SecretBox({ secret, title, onDone }: { secret: string; title: string; onDone: () => void }) {
  return (
    <section className="c-secret" aria-labelledby="secret-heading">
      <h2 id="secret-heading">{title}</h2>
      <p>Copy it now and keep it with your receiver: it verifies the X-Service-Signature header.</p>
      <p>
        <code data-testid="signing-secret">{secret}</code>
      </p>
      <div className="c-row">
        <CopyButton value={secret} label="Copy secret" />
        <button type="button" className="c-button c-secondary" onClick={onDone}>
          Hide secret
        </button>
      </div>
    </section>
  );
}
