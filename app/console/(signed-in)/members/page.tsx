'use client';

import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useSession } from '@/app/console/_lib/session';
import { api, useQueryApi } from '@/app/console/_lib/trpc';
import { Empty, ErrorNote, formatDate, Loading } from '@/app/console/_lib/ui';

type Role = 'owner' | 'admin' | 'viewer';

const ROLE_WORDS: Record<Role, string> = {
  owner: 'Owner — everything, including owners',
  admin: 'Admin — everything except owners',
  viewer: 'Viewer — read-only',
};

export default function MembersPage() {
  const { canManage, me } = useSession();
  const queries = useQueryApi();
  const members = useQuery(queries.members.list.queryOptions());
  const invitations = useQuery(queries.members.invitations.queryOptions());
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string | null>(null);
  const isOwner = me.current_team?.role === 'owner';

  async function act(run: () => Promise<unknown>, message: string) {
    try {
      await run();
      setError(undefined);
      setNotice(message);
      members.refetch();
      invitations.refetch();
    } catch (err) {
      setNotice(null);
      setError(err);
    }
  }

  async function onInvite(event: FormEvent) {
    event.preventDefault();
    await act(
      () => api.members.invite.mutate({ email, role }),
      `Invitation sent to ${email}. They join the team once they accept it (within 7 days).`,
    );
    setEmail('');
  }

  return (
    <>
      <h1>Members</h1>
      {canManage ? (
        <form onSubmit={onInvite} className="c-form c-filters" aria-label="Invite a member">
          <div>
            <label htmlFor="invite-email">E-mail to invite</label>
            <input
              id="invite-email"
              type="email"
              required
              value={email}
              onChange={(e) => setEmail(e.target.value)}
            />
          </div>
          <div>
            <label htmlFor="invite-role">Role</label>
            <select id="invite-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
              {(isOwner ? ['viewer', 'admin', 'owner'] : ['viewer', 'admin']).map((r) => (
                <option key={r} value={r}>
                  {ROLE_WORDS[r as Role]}
                </option>
              ))}
            </select>
          </div>
          <div className="c-row">
            <button type="submit" className="c-button">
              Invite
            </button>
          </div>
        </form>
      ) : (
        <p className="c-notice">You have read-only access (viewer).</p>
      )}
      <ErrorNote error={error} />
      {notice ? (
        <p className="c-notice" role="status">
          {notice}
        </p>
      ) : null}
      {members.isPending ? <Loading what="members" /> : null}
      <ErrorNote error={members.error} />
      {members.data ? (
        <div className="c-table-wrap">
          <table className="c-stack">
            <caption className="c-sr">Team members</caption>
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
                {canManage ? (
                  <th scope="col">
                    <span className="c-sr">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {members.data.map((m) => {
                const editable = canManage && (isOwner || m.role !== 'owner');
                return (
                  <tr key={m.user_id}>
                    <td data-label="E-mail">{m.email}</td>
                    <td data-label="Role">
                      {editable ? (
                        <select
                          aria-label={`Role of ${m.email}`}
                          value={m.role}
                          onChange={(e) =>
                            act(
                              () =>
                                api.members.changeRole.mutate({
                                  user_id: m.user_id,
                                  role: e.target.value as Role,
                                }),
                              `${m.email} is now ${e.target.value}.`,
                            )
                          }
                        >
                          {(isOwner ? ['owner', 'admin', 'viewer'] : ['admin', 'viewer']).map((r) => (
                            <option key={r} value={r}>
                              {r}
                            </option>
                          ))}
                        </select>
                      ) : (
                        m.role
                      )}
                    </td>
                    <td data-label="Joined">{formatDate(m.joined_at)}</td>
                    {canManage ? (
                      <td>
                        {editable ? (
                          <button
                            type="button"
                            className="c-button c-danger"
                            onClick={() => {
                              if (window.confirm(`Remove ${m.email} from the team?`)) {
                                act(
                                  () => api.members.remove.mutate({ user_id: m.user_id }),
                                  `${m.email} was removed.`,
                                );
                              }
                            }}
                          >
                            Remove<span className="c-sr"> {m.email}</span>
                          </button>
                        ) : null}
                      </td>
                    ) : null}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
      <h2>Pending invitations</h2>
      <ErrorNote error={invitations.error} />
      {invitations.isPending ? <Loading what="invitations" /> : null}
      {invitations.data && invitations.data.length === 0 ? <Empty>No invitations are waiting.</Empty> : null}
      {invitations.data && invitations.data.length > 0 ? (
        <div className="c-table-wrap">
          <table className="c-stack">
            <caption className="c-sr">Pending invitations</caption>
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Role</th>
                <th scope="col">Invited by</th>
                <th scope="col">Valid until</th>
                {canManage ? (
                  <th scope="col">
                    <span className="c-sr">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {invitations.data.map((invitation) => (
                <tr key={invitation.id}>
                  <td data-label="E-mail">{invitation.email}</td>
                  <td data-label="Role">{invitation.role}</td>
                  <td data-label="Invited by">{invitation.invited_by ?? '—'}</td>
                  <td data-label="Valid until">{formatDate(invitation.expires_at)}</td>
                  {canManage ? (
                    <td>
                      {isOwner || invitation.role !== 'owner' ? (
                        <button
                          type="button"
                          className="c-button c-danger"
                          onClick={() =>
                            act(
                              () => api.members.revokeInvitation.mutate({ id: invitation.id }),
                              `The invitation to ${invitation.email} was withdrawn.`,
                            )
                          }
                        >
                          Withdraw<span className="c-sr"> the invitation to {invitation.email}</span>
                        </button>
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
