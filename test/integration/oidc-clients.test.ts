/**
 * Identity-provider clients (issue 30, part 2): owners and admins register them in the console
 * (viewers read), the operator with the CLI; a secret is shown once and kept only as its hash;
 * redirect URIs are exact https (http only to a loopback host for a test-mode client); a rotation
 * keeps the replaced secret for the grace period chosen; every change is audited.
 */
import { createHash } from 'node:crypto';
import { and, eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, oidcClients } from '@/db/schema';
import { findClient, secretMatches } from '@/server/oidc/oidc-clients';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import {
  type ConsoleClient,
  consoleClient,
  runCli,
  runCliProcess,
  signInReplacingPassword,
} from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { inviteNewUser } from '@/test/support/invitations';

let database: TestDatabase;
let app: RunningApp;
let teamId: string;
let owner: ConsoleClient;
let viewer: ConsoleClient;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url });
  const created = await createTeam(
    database.db,
    { name: 'Okta Shop', adminEmail: 'owner@oktashop.test' },
    systemClock,
  );
  teamId = created.team.id;
  owner = await signInReplacingPassword(
    consoleClient(app.baseUrl),
    'owner@oktashop.test',
    created.owner.oneTimePassword,
    'oktashop-owner-password-1',
  );
  viewer = consoleClient(app.baseUrl);
  await inviteNewUser(owner, viewer, database.db, { email: 'viewer@oktashop.test', role: 'viewer' });
  // Templates belong to a mode: the test clients name the test one, the live client the live one.
  for (const key of [created.testKey.token, created.key.token]) {
    const template = await apiClient(app.baseUrl, key).post('/v1/templates/', {
      name: 'helpdesk',
      verification_methods: { email: true, government_id: true },
    });
    expect(template.status).toBe(201);
  }
  const testOnly = await apiClient(app.baseUrl, created.testKey.token).post('/v1/templates/', {
    name: 'test-only',
    verification_methods: { government_id: true },
  });
  expect(testOnly.status).toBe(201);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

interface ClientWire {
  client_id: string;
  name: string;
  redirect_uris: string[];
  default_template: string | null;
  mode: 'test' | 'live';
  secret_hint: string;
  previous_secret_expires_at: string | null;
  client_secret?: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('identity-provider clients in the console', () => {
  let registered: ClientWire;

  it('an owner registers one (test mode unless chosen); the secret is shown once and kept as its hash', async () => {
    const res = await owner.mutate<ClientWire>('console.oidcClients.create', {
      name: 'Okta (production tenant)',
      redirect_uris: ['https://acme.okta.com/idp/identity-verification/callback', 'http://localhost:4000/cb'],
      default_template: 'helpdesk',
    });
    expect(res.status, JSON.stringify(res.error)).toBe(200);
    registered = res.data as ClientWire;
    expect(registered).toMatchObject({
      client_id: expect.stringMatching(/^vouch_client_[0-9A-Za-z]{24}$/),
      mode: 'test',
      default_template: 'helpdesk',
      client_secret: expect.stringMatching(/^vouch_secret_[0-9A-Za-z]{40}$/),
    });
    const secret = registered.client_secret ?? '';
    expect(registered.secret_hint).toBe(secret.slice(-4));
    const [row] = await database.db
      .select()
      .from(oidcClients)
      .where(eq(oidcClients.id, registered.client_id));
    expect(row?.secretHash).toBe(sha256(secret));
    expect(JSON.stringify(row)).not.toContain(secret);
    // Never again: the list shows its hint only.
    const listed = await viewer.query<{ results: ClientWire[] }>('console.oidcClients.list');
    expect(listed.data?.results).toEqual([expect.objectContaining({ client_id: registered.client_id })]);
    expect(JSON.stringify(listed.data)).not.toContain(secret);
  });

  it('refuses redirect URIs that are not exact https (http to loopback only in test mode), and an unknown template or another mode’s', async () => {
    const refusals: Array<[Record<string, unknown>, RegExp]> = [
      [{ redirect_uris: ['http://rp.example/cb'] }, /redirect_uris: http:\/\/rp.example\/cb must use https/],
      [{ redirect_uris: ['http://localhost:4000/cb'], mode: 'live' }, /only a test-mode client/],
      [{ redirect_uris: ['https://rp.example/cb#x'] }, /must not have a fragment/],
      [
        { redirect_uris: ['https://rp.example/cb'], default_template: 'nope' },
        /default_template: your team has no test template named "nope"/,
      ],
      // A live client runs live templates only: a test template (made with a test key) is none.
      [
        { redirect_uris: ['https://rp.example/cb'], default_template: 'test-only', mode: 'live' },
        /default_template: your team has no live template named "test-only"/,
      ],
    ];
    for (const [body, message] of refusals) {
      const res = await owner.mutate('console.oidcClients.create', { name: 'x', ...body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.error?.message).toMatch(message);
    }
  });

  it('a rotation keeps the replaced secret for the grace period chosen; viewers may do none of it', async () => {
    const refused = await viewer.mutate('console.oidcClients.rotateSecret', {
      client_id: registered.client_id,
      grace_seconds: 0,
    });
    expect(refused.status).toBe(403);
    const rotated = await owner.mutate<ClientWire>('console.oidcClients.rotateSecret', {
      client_id: registered.client_id,
      grace_seconds: 3600,
    });
    expect(rotated.status).toBe(200);
    const fresh = rotated.data?.client_secret ?? '';
    expect(fresh).not.toBe(registered.client_secret);
    const client = await findClient(database.db, registered.client_id);
    if (!client) throw new Error('no client');
    const now = new Date();
    expect(secretMatches(client, fresh, now)).toBe(true);
    expect(secretMatches(client, registered.client_secret ?? '', now)).toBe(true);
    expect(secretMatches(client, registered.client_secret ?? '', new Date(now.getTime() + 3_601_000))).toBe(
      false,
    );
    // A rotation without grace ends the old secret at once.
    const again = await owner.mutate<ClientWire>('console.oidcClients.rotateSecret', {
      client_id: registered.client_id,
      grace_seconds: 0,
    });
    const after = await findClient(database.db, registered.client_id);
    if (!after) throw new Error('no client');
    expect(secretMatches(after, fresh, now)).toBe(false);
    expect(secretMatches(after, again.data?.client_secret ?? '', now)).toBe(true);
  });

  it('removes it, and audits every change by who made it', async () => {
    expect(
      (await viewer.mutate('console.oidcClients.delete', { client_id: registered.client_id })).status,
    ).toBe(403);
    expect(
      (await owner.mutate('console.oidcClients.delete', { client_id: registered.client_id })).status,
    ).toBe(200);
    expect(await findClient(database.db, registered.client_id)).toBeNull();
    const audited = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.teamId, teamId), eq(auditLog.target, registered.client_id)))
      .orderBy(auditLog.createdAt);
    expect(audited.map((row) => [row.action, row.actorEmail])).toEqual([
      ['oidc_client.created', 'owner@oktashop.test'],
      ['oidc_client.secret_rotated', 'owner@oktashop.test'],
      ['oidc_client.secret_rotated', 'owner@oktashop.test'],
      ['oidc_client.deleted', 'owner@oktashop.test'],
    ]);
    expect(JSON.stringify(audited)).not.toContain('vouch_secret_');
  });
});

describe('oidc-clients (the operator CLI)', () => {
  const env = () => ({ DATABASE_URL: database.url });

  it('creates a client with several redirect URIs, printing client_id and client_secret on its last line', async () => {
    const created = await runCli(
      [
        'oidc-clients',
        'create',
        '--team',
        teamId,
        '--name',
        'Auth0',
        '--redirect-uri',
        'https://tenant.auth0.com/login/callback',
        '--redirect-uri',
        'https://tenant.eu.auth0.com/login/callback',
        '--mode',
        'live',
        '--template',
        'helpdesk',
      ],
      env(),
    );
    expect(created).toMatchObject({
      client_id: expect.stringMatching(/^vouch_client_/),
      client_secret: expect.stringMatching(/^vouch_secret_/),
      mode: 'live',
      default_template: 'helpdesk',
      redirect_uris: [
        'https://tenant.auth0.com/login/callback',
        'https://tenant.eu.auth0.com/login/callback',
      ],
    });
    const listed = await runCli(['oidc-clients', 'list', '--team', teamId], env());
    expect(listed.clients).toEqual([
      expect.objectContaining({ client_id: created.client_id, name: 'Auth0' }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(String(created.client_secret));

    const rotated = await runCli(
      ['oidc-clients', 'rotate-secret', '--client', String(created.client_id), '--grace-seconds', '600'],
      env(),
    );
    expect(rotated.client_secret).not.toBe(created.client_secret);
    expect(rotated.previous_secret_expires_at).toEqual(expect.any(String));
    expect(await runCli(['oidc-clients', 'delete', '--client', String(created.client_id)], env())).toEqual({
      client_id: created.client_id,
      deleted: true,
    });
    const audited = await database.db
      .select()
      .from(auditLog)
      .where(
        and(
          eq(auditLog.teamId, teamId),
          like(auditLog.action, 'oidc_client.%'),
          eq(auditLog.target, String(created.client_id)),
        ),
      );
    expect(audited.map((row) => row.actorEmail)).toEqual([
      'Vouch operator (CLI)',
      'Vouch operator (CLI)',
      'Vouch operator (CLI)',
    ]);
  });

  it('refuses what it cannot do, naming why', async () => {
    const http = await runCliProcess(
      ['oidc-clients', 'create', '--team', teamId, '--name', 'x', '--redirect-uri', 'http://rp.example/cb'],
      env(),
    );
    expect(http.code).toBe(1);
    expect(http.err).toMatch(/redirect_uris: http:\/\/rp.example\/cb must use https/);
    const none = await runCliProcess(['oidc-clients', 'create', '--team', teamId, '--name', 'x'], env());
    expect(none.code).toBe(1);
    const unknown = await runCliProcess(['oidc-clients', 'delete', '--client', 'vouch_client_nope'], env());
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/no identity-provider client vouch_client_nope/);
  });
});
