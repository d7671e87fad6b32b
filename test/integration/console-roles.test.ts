import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog } from '@/db/schema';
import { appRouter } from '@/server/api/trpc/root';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import {
  type ConsoleClient,
  consoleClient,
  runCli,
  signInReplacingPassword,
} from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { inviteNewUser, latestInvitationToken } from '@/test/support/invitations';
import { expectServerErrors } from '@/test/support/openapi-conformance';

let database: TestDatabase;
let app: RunningApp;

interface CreatedTeam {
  team_id: string;
  api_key: string;
  admin_email: string;
  admin_password: string;
  console_url: string;
}

async function createTeamWithCli(name: string, email: string): Promise<CreatedTeam> {
  return (await runCli(['teams', 'create', '--name', name, '--admin-email', email], {
    DATABASE_URL: database.url,
    BASE_URL: app.baseUrl,
  })) as unknown as CreatedTeam;
}

/** Signs the owner in with the CLI's one-time password and replaces it, as the console asks. */
/** What the CLI's `teams create` does, in process (the CLI itself is run once, for team A). */
async function createTeamDirectly(name: string, email: string): Promise<CreatedTeam> {
  const { team, key, owner } = await createTeam(database.db, { name, adminEmail: email }, systemClock);
  return {
    team_id: team.id,
    api_key: key.token,
    admin_email: email,
    admin_password: owner.oneTimePassword ?? '',
    console_url: `${app.baseUrl}/console`,
  };
}

async function signInOwner(team: CreatedTeam, newPassword: string): Promise<ConsoleClient> {
  return signInReplacingPassword(
    consoleClient(app.baseUrl),
    team.admin_email,
    team.admin_password,
    newPassword,
  );
}

let teamA: CreatedTeam;
let teamB: CreatedTeam;
let ownerA: ConsoleClient;
let ownerB: ConsoleClient;
let viewerA: ConsoleClient;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url });
  teamA = await createTeamWithCli('Acme', 'owner@acme.test');
  teamB = await createTeamDirectly('Bravo', 'owner@bravo.test');
  ownerA = await signInOwner(teamA, 'acme-owner-password-1');
  ownerB = await signInOwner(teamB, 'bravo-owner-password-1');
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

describe('sign-in and sessions', () => {
  it('teams create prints a one-time password that must be replaced before anything else', async () => {
    expect(teamA.admin_password).toMatch(/^[0-9A-Za-z]{20}$/);
    expect(teamA.api_key).toMatch(/^vouch_live_/);
    expect(teamA.console_url).toBe(`${app.baseUrl}/console`);

    const team = await createTeamDirectly('Charlie', 'owner@charlie.test');
    const client = consoleClient(app.baseUrl);
    const signIn = await client.signIn(team.admin_email, team.admin_password);
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.getSetCookie().find((c) => c.includes('session_token'));
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Secure/i);

    const me = await client.query<{ password_change_required: boolean }>('console.session.me');
    expect(me.data?.password_change_required).toBe(true);
    const blocked = await client.query('console.keys.list');
    expect(blocked.status).toBe(403);
    expect(blocked.error?.message).toMatch(/new password/);
  });

  it('refuses a wrong password and an unknown e-mail alike', async () => {
    const client = consoleClient(app.baseUrl);
    expect((await client.signIn(teamA.admin_email, 'not-the-password')).status).toBe(401);
    expect((await client.signIn('nobody@acme.test', 'not-the-password')).status).toBe(401);
    expect((await client.query('console.session.me')).status).toBe(401);
  });

  it('the one-time password stops working once replaced, and sign-out ends the session', async () => {
    const client = consoleClient(app.baseUrl);
    expect((await client.signIn(teamA.admin_email, teamA.admin_password)).status).toBe(401);
    expect((await client.signIn(teamA.admin_email, 'acme-owner-password-1')).status).toBe(200);
    expect((await client.query('console.keys.list')).status).toBe(200);
    const before = client.cookies();
    expect((await client.signOut()).status).toBe(200);
    // The old cookie is dead on the server too, not just forgotten by the browser.
    for (const [name, value] of Object.entries(before)) client.setCookie(name, value);
    expect((await client.query('console.keys.list')).status).toBe(401);
  });

  it('a session in use is extended, and the browser is given the extended cookie', async () => {
    const client = consoleClient(app.baseUrl);
    expect((await client.signIn(teamA.admin_email, 'acme-owner-password-1')).status).toBe(200);
    const token = decodeURIComponent(
      Object.entries(client.cookies()).find(([name]) => name.includes('session_token'))?.[1] ?? '',
    ).split('.')[0];
    // As if signed in two days ago: past the one-day update age, five days left of seven.
    await database.sql`
      update auth_sessions set expires_at = now() + interval '5 days', updated_at = now() - interval '2 days'
      where token = ${token ?? ''}`;
    const cookieHeader = Object.entries(client.cookies())
      .map(([name, value]) => `${name}=${value}`)
      .join('; ');
    const response = await fetch(`${app.baseUrl}/api/trpc/console.session.me`, {
      headers: { Cookie: cookieHeader },
    });
    expect(response.status).toBe(200);
    const reissued = response.headers.getSetCookie().find((c) => c.includes('session_token'));
    expect(reissued).toMatch(/Max-Age=604800/);
    const [session] = await database.sql<{ days_left: number }[]>`
      select extract(epoch from expires_at - now()) / 86400 as days_left from auth_sessions where token = ${token ?? ''}`;
    expect(Number(session?.days_left)).toBeGreaterThan(6.9);
  });
});

describe('API keys from the console', () => {
  it('creates a key shown once, which works over REST until revoked', async () => {
    const created = await ownerA.mutate<{ id: string; api_key: string; prefix: string; last_four: string }>(
      'console.keys.create',
      { name: 'Production' },
    );
    expect(created.status).toBe(200);
    const key = created.data;
    if (!key) throw new Error('no key');
    expect(key.api_key.startsWith(key.prefix)).toBe(true);
    expect(key.api_key.endsWith(key.last_four)).toBe(true);

    const rest = apiClient(app.baseUrl, key.api_key);
    expect((await rest.get('/v1/account/')).status).toBe(200);

    const listed =
      await ownerA.query<Array<{ id: string; last_used_at: string | null }>>('console.keys.list');
    const row = listed.data?.find((k) => k.id === key.id);
    expect(row).toBeDefined();
    expect(row?.last_used_at).not.toBeNull();
    expect(JSON.stringify(listed.data)).not.toContain(key.api_key);

    expect((await ownerA.mutate('console.keys.revoke', { id: key.id })).status).toBe(200);
    const after = await rest.get<{ code: string }>('/v1/account/');
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('UNAUTHORIZED');
  });

  it('records who created and revoked keys, from where', async () => {
    const entries = await ownerA.query<{
      entries: Array<{ action: string; actor_email: string; ip_address: string }>;
    }>('console.audit.list', {});
    const actions = entries.data?.entries.map((e) => e.action) ?? [];
    expect(actions).toContain('api_key.created');
    expect(actions).toContain('api_key.revoked');
    expect(entries.data?.entries[0]?.actor_email).toBe('owner@acme.test');
    expect(entries.data?.entries[0]?.ip_address).toBe('127.0.0.1');
  });
});

describe('roles are enforced by the server', () => {
  it('an admin invites a viewer, who accepts through the e-mailed link and is signed in', async () => {
    viewerA = consoleClient(app.baseUrl);
    await inviteNewUser(ownerA, viewerA, database.db, { email: 'viewer@acme.test', role: 'viewer' });
    const me = await viewerA.query<{ current_team: { role: string; team_id: string } }>('console.session.me');
    expect(me.data?.current_team).toMatchObject({ role: 'viewer', team_id: teamA.team_id });
  });

  it('an invitation and its sign-in link work only once', async () => {
    const link = await inviteNewUser(ownerA, consoleClient(app.baseUrl), database.db, {
      email: 'second@acme.test',
      role: 'admin',
    });
    const again = await consoleClient(app.baseUrl).openLink(link);
    expect(again.headers.get('location')).toMatch(/error/);
    const token = await latestInvitationToken(database.db, 'second@acme.test');
    const twice = await consoleClient(app.baseUrl).mutate('console.invitations.acceptAsNewUser', { token });
    expect(twice.status).toBe(404);
  });

  it('a viewer reads but every change is refused', async () => {
    expect((await viewerA.query('console.keys.list')).status).toBe(200);
    expect((await viewerA.query('console.members.list')).status).toBe(200);
    expect((await viewerA.query('console.cases.list', {})).status).toBe(200);
    expect((await viewerA.query('console.account.overview')).status).toBe(200);
    expect(
      (await viewerA.query('console.passkeys.list', { subject_email: 'someone@acme.test' })).status,
    ).toBe(200);
    // An owner's revocation passes the role check (and finds no such passkey); a viewer's does not.
    const ownerRevoke = await ownerA.mutate('console.passkeys.revoke', {
      id: '00000000-0000-4000-8000-000000000000',
    });
    expect(ownerRevoke.error?.data?.appCode).toBe('NOT_FOUND');

    const refusals = [
      await viewerA.mutate('console.keys.create', { name: 'sneaky' }),
      await viewerA.mutate('console.keys.revoke', { id: '00000000-0000-4000-8000-000000000000' }),
      await viewerA.mutate('console.members.invite', { email: 'friend@acme.test', role: 'admin' }),
      await viewerA.mutate('console.members.changeRole', { user_id: 'x', role: 'owner' }),
      await viewerA.mutate('console.members.remove', { user_id: 'x' }),
      await viewerA.mutate('console.passkeys.revoke', { id: '00000000-0000-4000-8000-000000000000' }),
      // An import's rows carry people's addresses: a viewer neither uploads nor reads them.
      await viewerA.mutate('console.imports.draft', {
        file_name: 'wave.csv',
        csv: 'email\nsneaky@acme.test\n',
        default_methods: ['email'],
      }),
      await viewerA.query('console.imports.list'),
      await viewerA.query('console.imports.result', { id: '00000000-0000-4000-8000-000000000000' }),
    ];
    for (const refused of refusals) {
      expect(refused.status).toBe(403);
      expect(refused.error?.data?.appCode).toBe('FORBIDDEN');
    }
    const keys = await ownerA.query<Array<{ name: string }>>('console.keys.list');
    expect(keys.data?.map((k) => k.name)).not.toContain('sneaky');
  });

  it("a viewer never gets a case's link or the public id it is made of; owners and admins do", async () => {
    const api = apiClient(app.baseUrl, teamA.api_key);
    const endpoint = await api.post<{ id: string }>('/v1/webhooks/endpoints/', {
      url: 'https://hooks.example.com/viewer-check',
      events: ['case.created'],
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const created = await api.post<{ id: string; public_id: string; verification_url: string }>(
      '/v1/cases/',
      {
        subject_email: 'linked@acme.test',
        verification_methods: { custom_question: true },
        custom_question_text: 'Badge colour?',
        custom_question_answer: 'Blue',
      },
    );
    expect(created.status, created.text).toBe(201);
    const { id, public_id: publicId } = created.body;
    const deliveries = await api.get<{ results: Array<{ id: string }> }>(
      `/v1/webhooks/deliveries/?endpoint_id=${endpoint.body.id}`,
    );
    expect(deliveries.status, deliveries.text).toBe(200);
    const deliveryId = deliveries.body.results[0]?.id ?? '';

    type CaseView = { public_id: string | null; verification_url: string | null };
    const seenBy = async (client: ConsoleClient) => {
      const list = await client.query<{ results: Array<CaseView & { id: string }> }>(
        'console.cases.list',
        {},
      );
      const detail = await client.query<{ case: CaseView; events: Array<{ data: Record<string, unknown> }> }>(
        'console.cases.get',
        { id },
      );
      const delivery = await client.query<{ payload: string | null }>('console.webhooks.delivery', {
        id: deliveryId,
      });
      for (const res of [list, detail, delivery]) expect(res.status).toBe(200);
      return {
        list: list.data?.results.find((c) => c.id === id),
        detail: detail.data,
        delivery: delivery.data,
      };
    };

    const owner = await seenBy(ownerA);
    expect(owner.list).toMatchObject({
      public_id: publicId,
      verification_url: created.body.verification_url,
    });
    expect(owner.detail?.case.verification_url).toBe(created.body.verification_url);
    expect(owner.detail?.events[0]?.data.public_id).toBe(publicId);
    expect(owner.delivery?.payload).toContain(publicId);

    const viewer = await seenBy(viewerA);
    expect(viewer.list).toMatchObject({ public_id: null, verification_url: null });
    expect(viewer.detail?.case).toMatchObject({ public_id: null, verification_url: null });
    expect(viewer.detail?.events[0]?.data).toMatchObject({ case_id: id, subject_email: 'linked@acme.test' });
    expect(JSON.parse(viewer.delivery?.payload ?? '{}').data).toMatchObject({ case_id: id });
    // Nowhere in what the viewer received: not the link, not its id.
    expect(JSON.stringify(viewer)).not.toContain(publicId);
  });

  it('an admin cannot touch an owner, and the last owner cannot be removed', async () => {
    const members = await ownerA.query<Array<{ user_id: string; email: string }>>('console.members.list');
    const owner = members.data?.find((m) => m.email === 'owner@acme.test');
    const second = members.data?.find((m) => m.email === 'second@acme.test');
    if (!owner || !second) throw new Error('members missing');
    expect((await ownerA.mutate('console.members.remove', { user_id: owner.user_id })).status).toBe(422);
    const admin = consoleClient(app.baseUrl);
    await inviteNewUser(ownerA, admin, database.db, { email: 'third@acme.test', role: 'admin' });
    const demote = await admin.mutate('console.members.changeRole', {
      user_id: owner.user_id,
      role: 'viewer',
    });
    expect(demote.status).toBe(403);
    const promote = await admin.mutate('console.members.changeRole', {
      user_id: second.user_id,
      role: 'owner',
    });
    expect(promote.status).toBe(403);
  });

  it('refuses a changing call from another site', async () => {
    const crossSite = await ownerA.mutate(
      'console.keys.create',
      { name: 'csrf' },
      { Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' },
    );
    expect(crossSite.status).toBe(403);
  });

  it('no console procedure is published over REST', async () => {
    // The console's procedures exist (so the check below has something to keep out)...
    const consoleProcedures = Object.keys(appRouter._def.procedures as object).filter((p) =>
      p.startsWith('console.'),
    );
    expect(consoleProcedures.length).toBeGreaterThan(20);
    // ...and the document publishes exactly the API's operations, none of them.
    const rest = apiClient(app.baseUrl, teamB.api_key);
    const doc = await rest.get<{ paths: Record<string, Record<string, unknown>> }>('/v1/openapi.json');
    const published = Object.entries(doc.body.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(published.sort()).toEqual(
      [
        'GET /v1/ping',
        'POST /v1/cases/',
        'POST /v1/cases/batch/',
        'GET /v1/cases/',
        'GET /v1/cases/{id}/',
        'GET /v1/cases/{id}/evidence/',
        'POST /v1/cases/{id}/simulate/',
        'POST /v1/cases/{id}/cancel/',
        'POST /v1/cases/{id}/resend/',
        'POST /v1/cases/{id}/redact/',
        'GET /v1/account/',
        'GET /v1/account/usage/',
        'POST /v1/webhooks/endpoints/',
        'GET /v1/webhooks/endpoints/',
        'GET /v1/webhooks/endpoints/{id}/',
        'PATCH /v1/webhooks/endpoints/{id}/',
        'DELETE /v1/webhooks/endpoints/{id}/',
        'POST /v1/webhooks/endpoints/{id}/rotate-secret/',
        'POST /v1/webhooks/endpoints/{id}/test/',
        'GET /v1/webhooks/deliveries/',
        'GET /v1/webhooks/deliveries/{id}/',
        'POST /v1/webhooks/deliveries/{id}/retry/',
        'POST /v1/webhooks/endpoints/{id}/recover/',
        'GET /v1/events/',
        'GET /v1/events/{id}/',
        'POST /v1/templates/',
        'GET /v1/templates/',
        'GET /v1/templates/{id}/',
        'PATCH /v1/templates/{id}/',
        'DELETE /v1/templates/{id}/',
        'GET /v1/passkeys/',
        'DELETE /v1/passkeys/{id}/',
      ].sort(),
    );
    // And no REST path reaches one either.
    for (const path of ['/v1/console/keys/list', '/v1/console.keys.list', '/v1/keys/']) {
      expect((await rest.get(path)).status, path).toBe(404);
    }
  });
});

describe('webhooks from the console', () => {
  let endpointId: string;

  it('validates like the API, shows the secret on create only, and reveals it again after the password', async () => {
    const bad = await ownerA.mutate('console.webhooks.create', {
      url: 'http://hooks.example.com/x',
      events: ['case.closed'],
    });
    expect(bad.status).toBe(422);
    expect(bad.error?.data?.appCode).toBe('INVALID_URL');
    const noEvents = await ownerA.mutate('console.webhooks.create', {
      url: 'https://hooks.example.com/x',
      events: [],
    });
    expect(noEvents.error?.data?.appCode).toBe('INVALID_EVENTS');
    // A name only a local network could answer for is refused here as by the API.
    const local = await ownerA.mutate('console.webhooks.create', {
      url: 'https://localhost/hook',
      events: ['case.closed'],
    });
    expect(local.status).toBe(422);
    expect(local.error?.data?.appCode).toBe('INVALID_URL');
    expect(local.error?.message).toMatch(/no public address can answer for .*`npm run listen/);

    const created = await ownerA.mutate<{ id: string; secret: string }>('console.webhooks.create', {
      url: 'https://hooks.example.com/x',
      events: ['case.closed'],
      description: 'console test',
    });
    expect(created.status).toBe(200);
    endpointId = created.data?.id ?? '';
    expect(created.data?.secret).toMatch(/^whsec_/);
    const listed = await ownerA.query<Array<Record<string, unknown>>>('console.webhooks.list');
    expect(listed.data?.[0]).not.toHaveProperty('secret');

    const wrong = await ownerA.mutate('console.webhooks.revealSecret', { id: endpointId, password: 'nope' });
    expect(wrong.status).toBe(403);
    const revealed = await ownerA.mutate<{ secret: string }>('console.webhooks.revealSecret', {
      id: endpointId,
      password: 'acme-owner-password-1',
    });
    expect(revealed.data?.secret).toBe(created.data?.secret);

    const rotated = await ownerA.mutate<{ secret: string }>('console.webhooks.rotateSecret', {
      id: endpointId,
    });
    expect(rotated.data?.secret).toMatch(/^whsec_/);
    expect(rotated.data?.secret).not.toBe(created.data?.secret);

    const moved = await ownerA.mutate('console.webhooks.update', {
      id: endpointId,
      url: 'https://printer.local/hook',
    });
    expect(moved.status).toBe(422);
    expect(moved.error?.data?.appCode).toBe('INVALID_URL');
  });

  it('a viewer reads endpoints and deliveries but cannot change, test, reveal or retry', async () => {
    expect((await viewerA.query('console.webhooks.list')).status).toBe(200);
    expect((await viewerA.query('console.webhooks.deliveries', {})).status).toBe(200);
    for (const [path, input] of [
      ['console.webhooks.create', { url: 'https://hooks.example.com/y', events: ['case.closed'] }],
      ['console.webhooks.update', { id: endpointId, is_active: false }],
      ['console.webhooks.delete', { id: endpointId }],
      ['console.webhooks.rotateSecret', { id: endpointId }],
      ['console.webhooks.revealSecret', { id: endpointId, password: 'x' }],
      ['console.webhooks.sendTest', { id: endpointId }],
      ['console.webhooks.retry', { id: endpointId }],
    ] as const) {
      const refused = await viewerA.mutate(path, input);
      expect(refused.status, path).toBe(403);
    }
  });

  it('an admin who signs in by link only must set a password before revealing a secret', async () => {
    const admin = consoleClient(app.baseUrl);
    await inviteNewUser(ownerA, admin, database.db, { email: 'linkonly@acme.test', role: 'admin' });
    const refused = await admin.mutate('console.webhooks.revealSecret', {
      id: endpointId,
      password: 'anything',
    });
    expect(refused.status).toBe(403);
    expect(refused.error?.message).toMatch(/set a password/);
    const set = await admin.mutate('console.session.changePassword', {
      new_password: 'link-only-admin-pw-1',
    });
    expect(set.status).toBe(200);
    const revealed = await admin.mutate<{ secret: string }>('console.webhooks.revealSecret', {
      id: endpointId,
      password: 'link-only-admin-pw-1',
    });
    expect(revealed.data?.secret).toMatch(/^whsec_/);
  });

  it('another team cannot see or touch the endpoint', async () => {
    expect((await ownerB.query('console.webhooks.get', { id: endpointId })).status).toBe(404);
    expect((await ownerB.mutate('console.webhooks.rotateSecret', { id: endpointId })).status).toBe(404);
    const list = await ownerB.query<unknown[]>('console.webhooks.list');
    expect(list.data).toEqual([]);
  });

  it('every change is in the audit log', async () => {
    const log = await ownerA.query<{ entries: Array<{ action: string }> }>('console.audit.list', {});
    const actions = log.data?.entries.map((e) => e.action) ?? [];
    for (const action of [
      'webhook_endpoint.created',
      'webhook_endpoint.secret_revealed',
      'webhook_endpoint.secret_rotated',
      'member.invited',
    ]) {
      expect(actions).toContain(action);
    }
  });

  it('a webhook change whose audit entry cannot be written does not happen', async () => {
    // The refused audit entry fails each change with a 500: what this test provokes.
    expectServerErrors();
    // The audit insert fails for the actions listed in `refused_audit_actions`, as a full disk or
    // a lost connection would fail it; the change it records must roll back with it.
    await database.sql.unsafe(`
      create table refused_audit_actions (action text primary key);
      create function refuse_audit() returns trigger language plpgsql as $$
        begin
          if exists (select 1 from refused_audit_actions where action = new.action) then
            raise exception 'audit entry refused: %', new.action;
          end if;
          return new;
        end $$;
      create trigger refuse_audit before insert on audit_log for each row execute function refuse_audit();
    `);
    const refuse = async (...actions: string[]) => {
      await database.sql`delete from refused_audit_actions`;
      await database.sql`insert into refused_audit_actions ${database.sql(actions.map((action) => ({ action })))}`;
    };
    const endpointsOfB = () =>
      database.sql<{ id: string; secret: string }[]>`
        select id, secret from webhook_endpoints where team_id = ${teamB.team_id}`;
    try {
      await refuse('webhook_endpoint.created');
      const create = { url: 'https://hooks.example.com/audited', events: ['case.closed'] };
      expect((await ownerB.mutate('console.webhooks.create', create)).status).toBe(500);
      expect(await endpointsOfB()).toEqual([]);

      await refuse(
        'webhook_endpoint.secret_rotated',
        'webhook_endpoint.deleted',
        'webhook_endpoint.disabled',
      );
      const created = await ownerB.mutate<{ id: string; secret: string }>('console.webhooks.create', create);
      expect(created.status).toBe(200);
      const id = created.data?.id;
      expect((await ownerB.mutate('console.webhooks.rotateSecret', { id })).status).toBe(500);
      expect((await ownerB.mutate('console.webhooks.update', { id, is_active: false })).status).toBe(500);
      expect((await ownerB.mutate('console.webhooks.delete', { id })).status).toBe(500);
      const [kept] = await endpointsOfB();
      expect(kept?.secret).toBe(created.data?.secret);
      const [state] = await database.sql`select is_active from webhook_endpoints where id = ${id ?? ''}`;
      expect(state?.is_active).toBe(true);
    } finally {
      await database.sql.unsafe(`
        drop trigger refuse_audit on audit_log;
        drop function refuse_audit;
        drop table refused_audit_actions;
        delete from webhook_endpoints where team_id = '${teamB.team_id}';
      `);
    }
  });
});

describe('another team', () => {
  it("never sees a team's cases, keys, members or audit log", async () => {
    const restA = apiClient(app.baseUrl, teamA.api_key);
    const created = await restA.post<{ id: string }>('/v1/cases/', {
      subject_email: 'subject@acme.test',
      verification_methods: { email: true },
    });
    expect(created.status).toBe(201);

    expect((await ownerA.query('console.cases.get', { id: created.body.id })).status).toBe(200);
    const foreign = await ownerB.query('console.cases.get', { id: created.body.id });
    expect(foreign.status).toBe(404);

    const bCases = await ownerB.query<{ results: unknown[] }>('console.cases.list', {});
    expect(bCases.data?.results).toEqual([]);
    // An audited change of B's own, so B's audit log below is not empty.
    expect((await ownerB.mutate('console.keys.create', { name: 'Bravo key' })).status).toBe(200);
    const bKeys = await ownerB.query<Array<{ id: string; name: string }>>('console.keys.list');
    const aKeys = await ownerA.query<Array<{ id: string }>>('console.keys.list');
    expect(aKeys.data?.length).toBeGreaterThan(0);
    expect(bKeys.data?.map((k) => k.name).sort()).toEqual(['Bravo key', 'Default key', 'Default test key']);
    const aKeyIds = new Set(aKeys.data?.map((k) => k.id));
    expect(bKeys.data?.filter((k) => aKeyIds.has(k.id))).toEqual([]);
    const bMembers = await ownerB.query<Array<{ email: string }>>('console.members.list');
    expect(bMembers.data?.map((m) => m.email)).toEqual(['owner@bravo.test']);
    const bAudit = await ownerB.query<{ entries: Array<{ actor_email: string; action: string }> }>(
      'console.audit.list',
      {},
    );
    expect(bAudit.data?.entries.length).toBeGreaterThan(0);
    expect(new Set(bAudit.data?.entries.map((e) => e.actor_email))).toEqual(new Set(['owner@bravo.test']));

    const bRevokesA = await ownerB.mutate('console.keys.revoke', { id: aKeys.data?.[0]?.id });
    expect(bRevokesA.status).toBe(404);
  });

  it('choosing a team one does not belong to falls back to one own team', async () => {
    ownerB.setCookie('vouch_team', teamA.team_id);
    const me = await ownerB.query<{ current_team: { team_id: string } }>('console.session.me');
    expect(me.data?.current_team.team_id).toBe(teamB.team_id);
    const cases = await ownerB.query<{ results: unknown[] }>('console.cases.list', {});
    expect(cases.data?.results).toEqual([]);
  });

  it('a member of two teams switches between them, and only between them', async () => {
    const refused = await ownerB.mutate('console.session.chooseTeam', { team_id: teamA.team_id });
    expect(refused.status).toBe(403);

    const invited = await ownerA.mutate('console.members.invite', {
      email: 'owner@bravo.test',
      role: 'viewer',
    });
    expect(invited.status).toBe(200);
    // A member only once they accept.
    expect((await ownerB.mutate('console.session.chooseTeam', { team_id: teamA.team_id })).status).toBe(403);
    const token = await latestInvitationToken(database.db, 'owner@bravo.test');
    expect((await ownerB.mutate('console.invitations.accept', { token })).status).toBe(200);
    const chosen = await ownerB.mutate('console.session.chooseTeam', { team_id: teamA.team_id });
    expect(chosen.status).toBe(200);
    const me = await ownerB.query<{ current_team: { team_id: string; role: string }; teams: unknown[] }>(
      'console.session.me',
    );
    expect(me.data?.teams).toHaveLength(2);
    expect(me.data?.current_team).toMatchObject({ team_id: teamA.team_id, role: 'viewer' });
    expect((await ownerB.mutate('console.keys.create', { name: 'as viewer' })).status).toBe(403);

    await ownerB.mutate('console.session.chooseTeam', { team_id: teamB.team_id });
    expect((await ownerB.mutate('console.keys.create', { name: 'own team' })).status).toBe(200);
  });

  it('the audit rows of one team stay with it', async () => {
    const rows = await database.db.select().from(auditLog).where(eq(auditLog.teamId, teamB.team_id));
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => r.actorEmail))).toEqual(new Set(['owner@bravo.test']));
  });
});

describe('brute force', () => {
  it('limits password sign-in attempts per client address', async () => {
    // The budgets start full: tests above signed in from this address too. Two limits stand:
    // failed checks per account and address (5 per 15 minutes), and better-auth's sign-in calls
    // per address (10 a minute); the first is met first.
    await database.sql`delete from rate_limits where key like 'pwfail%'`;
    await database.sql`delete from auth_rate_limits`;
    const client = consoleClient(app.baseUrl);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++)
      statuses.push((await client.signIn('owner@bravo.test', `guess-${i}`)).status);
    // Five failed checks per account and client address per 15 minutes (decisions), then refused.
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
    // Once limited, even the right password is refused for the rest of the window.
    expect((await client.signIn('owner@bravo.test', 'bravo-owner-password-1')).status).toBe(429);
  });
});
