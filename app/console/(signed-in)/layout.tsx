'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { type ReactNode, useEffect } from 'react';
import { signOut } from '@/app/console/_lib/auth-client';
import { switchMode } from '@/app/console/_lib/mode';
import { SessionContext } from '@/app/console/_lib/session';
import { api, errorCode, useQueryApi } from '@/app/console/_lib/trpc';
import { ErrorNote, Loading } from '@/app/console/_lib/ui';
import { ChangePassword } from './change-password';

const NAV = [
  { href: '/console', label: 'Usage' },
  { href: '/console/cases', label: 'Cases' },
  { href: '/console/templates', label: 'Templates' },
  { href: '/console/keys', label: 'API keys' },
  { href: '/console/webhooks', label: 'Webhooks' },
  { href: '/console/identity-providers', label: 'Identity providers' },
  { href: '/console/members', label: 'Members' },
  { href: '/console/branding', label: 'Branding' },
  { href: '/console/audit', label: 'Audit log' },
];

function isCurrent(pathname: string, href: string): boolean {
  return href === '/console' ? pathname === href : pathname === href || pathname.startsWith(`${href}/`);
}

export default function SignedInLayout({ children }: { children: ReactNode }) {
  const pathname = usePathname();
  const queries = useQueryApi();
  const me = useQuery(queries.session.me.queryOptions());
  const signedOut = errorCode(me.error) === 'UNAUTHORIZED';

  useEffect(() => {
    if (signedOut) window.location.replace('/console/sign-in');
  }, [signedOut]);

  if (me.isPending) {
    return (
      <main>
        <Loading what="the console" />
      </main>
    );
  }
  if (!me.data) {
    return <main>{signedOut ? <Loading what="the sign-in page" /> : <ErrorNote error={me.error} />}</main>;
  }

  const current = me.data.current_team;
  const nav = me.data.dev_mailbox ? [...NAV, { href: '/console/mailbox', label: 'Mailbox' }] : NAV;

  return (
    <SessionContext.Provider
      value={{ me: me.data, canManage: current?.role === 'owner' || current?.role === 'admin' }}
    >
      <a href="#content" className="c-skip">
        Skip to content
      </a>
      <header className="c-header">
        <div className="c-brand">
          <strong>Vouch</strong>
          {current ? <span className="c-muted"> · {current.team_name}</span> : null}
        </div>
        {me.data.teams.length > 1 ? (
          <label className="c-team-picker">
            <span className="c-sr">Team</span>
            <select
              value={current?.team_id}
              onChange={async (e) => {
                await api.session.chooseTeam.mutate({ team_id: e.target.value });
                window.location.assign('/console');
              }}
            >
              {me.data.teams.map((t) => (
                <option key={t.team_id} value={t.team_id}>
                  {t.team_name} ({t.role})
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {current ? (
          <label className="c-mode-switch">
            <input
              type="checkbox"
              defaultChecked={me.data.mode === 'test'}
              onChange={(e) => switchMode(e.target.checked ? 'test' : 'live')}
            />{' '}
            Test data
          </label>
        ) : null}
        <div className="c-user">
          <span className="c-muted">
            {me.data.user.email}
            {current ? ` (${current.role})` : ''}
          </span>
          {me.data.password_change_required ? null : <Link href="/console/password">Password</Link>}
          <button
            type="button"
            className="c-button c-secondary"
            onClick={async () => {
              await signOut();
              window.location.assign('/console/sign-in');
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      {current && me.data.mode === 'test' ? (
        <section className="c-banner c-test-banner" aria-label="Test mode">
          <strong>Viewing test data.</strong> Cases, webhooks and events here belong to test keys (
          <code>vouch_test_…</code>): they cost nothing and send no real mail or text message.
        </section>
      ) : null}
      {me.data.stand_ins.length > 0 ? (
        <section className="c-banner" aria-label="Development mode">
          <strong>Development mode.</strong> Stand-ins serve this service, so verifications here prove
          nothing: {me.data.stand_ins.join('; ')}.
        </section>
      ) : null}
      {me.data.password_change_required || !current ? null : (
        <nav aria-label="Console" className="c-nav">
          <ul>
            {nav.map((item) => (
              <li key={item.href}>
                <Link href={item.href} aria-current={isCurrent(pathname, item.href) ? 'page' : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
      )}
      <main id="content">
        {me.data.password_change_required ? (
          <ChangePassword required onChanged={() => me.refetch()} />
        ) : current ? (
          children
        ) : (
          <p>You are not a member of any team any more. Ask a team admin to invite you.</p>
        )}
      </main>
    </SessionContext.Provider>
  );
}
