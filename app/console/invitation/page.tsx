'use client';

import { useEffect, useState } from 'react';
import { signOut } from '@/app/console/_lib/auth-client';
import { api, errorCode } from '@/app/console/_lib/trpc';
import { ErrorNote, formatDate, Loading } from '@/app/console/_lib/ui';

type Invitation = Awaited<ReturnType<typeof api.invitations.show.query>>;

interface Loaded {
  token: string;
  invitation?: Invitation;
  /** Who is signed in in this browser, if anyone. */
  signedInAs: string | null;
  error?: unknown;
}

async function load(): Promise<Loaded> {
  const token = new URLSearchParams(window.location.search).get('token') ?? '';
  const [invitation, me] = await Promise.allSettled([
    api.invitations.show.query({ token }),
    api.session.me.query(),
  ]);
  const signedInAs = me.status === 'fulfilled' ? me.value.user.email : null;
  if (me.status === 'rejected' && errorCode(me.reason) !== 'UNAUTHORIZED') {
    return { token, signedInAs, error: me.reason };
  }
  if (invitation.status === 'rejected') return { token, signedInAs, error: invitation.reason };
  return { token, signedInAs, invitation: invitation.value };
}

/**
 * Where an invitation's e-mailed link leads. Nothing changes until the invitee accepts: signed
 * in as the invited address, or, without an account yet, by accepting here (the link came to
 * their mailbox), which makes the account and signs them in.
 */
export default function InvitationPage() {
  const [state, setState] = useState<Loaded | null>(null);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    load().then(setState, (err: unknown) => setState({ token: '', signedInAs: null, error: err }));
  }, []);

  async function act(run: () => Promise<string>) {
    setBusy(true);
    try {
      window.location.assign(await run());
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }

  if (!state) {
    return (
      <main className="c-narrow">
        <Loading what="the invitation" />
      </main>
    );
  }
  const { invitation, signedInAs, token } = state;
  if (!invitation) {
    return (
      <main className="c-narrow">
        <h1>Invitation</h1>
        <ErrorNote error={state.error} />
        <p>
          <a href="/console/sign-in">Sign in to the console</a>
        </p>
      </main>
    );
  }
  const here = `${window.location.pathname}${window.location.search}`;
  const signedInAsInvitee = signedInAs?.toLowerCase() === invitation.email;

  return (
    <main className="c-narrow">
      <h1>Join {invitation.team_name} on Vouch</h1>
      <p>
        {invitation.invited_by ?? 'A team admin'} invited <strong>{invitation.email}</strong> to the team's
        console as <strong>{invitation.role}</strong>. The invitation is valid until{' '}
        {formatDate(invitation.expires_at)}.
      </p>
      <ErrorNote error={error} />
      {signedInAsInvitee ? (
        <button
          type="button"
          className="c-button"
          disabled={busy}
          onClick={() =>
            act(async () => {
              await api.invitations.accept.mutate({ token });
              return '/console';
            })
          }
        >
          Accept the invitation
        </button>
      ) : signedInAs ? (
        <>
          <p>
            You are signed in as {signedInAs}. To accept, sign out and sign in as {invitation.email}.
          </p>
          <button
            type="button"
            className="c-button c-secondary"
            disabled={busy}
            onClick={() =>
              act(async () => {
                await signOut();
                return here;
              })
            }
          >
            Sign out
          </button>
        </>
      ) : invitation.has_account ? (
        <p>
          <a className="c-button" href={`/console/sign-in?next=${encodeURIComponent(here)}`}>
            Sign in as {invitation.email} to accept
          </a>
        </p>
      ) : (
        <>
          <p>Accepting makes you a console account for {invitation.email} and signs you in.</p>
          <button
            type="button"
            className="c-button"
            disabled={busy}
            onClick={() =>
              act(async () => (await api.invitations.acceptAsNewUser.mutate({ token })).sign_in_url)
            }
          >
            Accept and sign in
          </button>
        </>
      )}
    </main>
  );
}
