/**
 * A team's identity-provider clients managed in-process against a real PostgreSQL
 * (server/application/oidc/client-actions.ts over server/oidc/oidc-clients.ts): registration with
 * its checks (redirect URIs, a template of the client's own mode, 20 a team), the secret answered
 * once and kept as a hash, rotation with and without grace, deletion, another team's client as
 * none, and the audit entry each change commits with.
 */
import { createHash } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, oidcClients } from '@/db/schema';
import { clientActions } from '@/server/application/oidc/client-actions';
import { templateActions } from '@/server/application/templates/template-actions';
import { OPERATOR_ACTOR } from '@/server/audit/record-audit';
import {
  CLIENT_ID_PREFIX,
  CLIENT_LIMIT,
  findClient,
  findTeamClientOrFail,
  isClientId,
  listClients,
  MAX_SECRET_GRACE_SECONDS,
  secretMatches,
} from '@/server/oidc/oidc-clients';
import { REDIRECT_URI_LIMITS } from '@/server/oidc/redirect-uris';
import type { Clock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, startInProcess } from '@/test/support/in-process';

const REDIRECT = 'https://acme.okta.com/idp/identity-verification/callback';
let inProcess: InProcess;
let database: TestDatabase;
const now = new Date('2026-11-28T10:00:00Z');
const clock: Clock = () => new Date(now);

async function newTeam(name: string): Promise<string> {
  const { team } = await createTeam(database.db, { name, adminEmail: `owner@${name}.test` }, clock);
  for (const mode of ['live', 'test'] as const) {
    await templateActions.create(
      {
        db: database.db,
        teamId: team.id,
        actor: OPERATOR_ACTOR,
        clock,
        jobs: inProcess.jobs,
        rateLimiters: inProcess.rateLimiters,
        scope: { teamId: team.id, livemode: mode === 'live' },
      },
      { name: `${mode}-only`, verification_methods: { government_id: true } },
    );
  }
  return team.id;
}

const ctx = (teamId: string) => ({ db: database.db, teamId, actor: OPERATOR_ACTOR, clock });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function auditOf(teamId: string, action: string) {
  return database.db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.teamId, teamId), eq(auditLog.action, action)));
}

async function refusal(promise: Promise<unknown>) {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
});

afterAll(async () => {
  await inProcess?.close();
});

describe('registering a client', () => {
  it('answers its secret once and keeps its SHA-256 and last four; the id has its shape; audited', async () => {
    const teamId = await newTeam('register');
    const { client, secret } = await clientActions.create(ctx(teamId), {
      name: 'Okta',
      redirect_uris: [REDIRECT, REDIRECT],
      default_template: 'live-only',
      mode: 'live',
    });
    expect(client.id).toMatch(/^vouch_client_[0-9A-Za-z]{24}$/);
    expect(client.id.startsWith(CLIENT_ID_PREFIX)).toBe(true);
    expect(isClientId(client.id)).toBe(true);
    expect(secret).toMatch(/^vouch_secret_[0-9A-Za-z]{40}$/);
    expect(client).toMatchObject({
      teamId,
      name: 'Okta',
      livemode: true,
      // The same URI twice is kept once.
      redirectUris: [REDIRECT],
      defaultTemplate: 'live-only',
      secretHash: sha256(secret),
      secretHint: secret.slice(-4),
      previousSecretHash: null,
      previousSecretExpiresAt: null,
      createdAt: now,
    });
    const [row] = await database.db.select().from(oidcClients).where(eq(oidcClients.id, client.id));
    expect(JSON.stringify(row)).not.toContain(secret);

    const [entry] = await auditOf(teamId, 'oidc_client.created');
    expect(entry).toMatchObject({
      target: client.id,
      details: { name: 'Okta', livemode: true, redirect_uris: [REDIRECT], default_template: 'live-only' },
    });

    // A test client, without a template.
    const test = await clientActions.create(ctx(teamId), {
      name: 'Sandbox',
      redirect_uris: [REDIRECT],
      mode: 'test',
    });
    expect(test.client).toMatchObject({ livemode: false, defaultTemplate: null, defaultTemplateId: null });
    expect((await listClients(database.db, teamId)).map((c) => [c.name, c.defaultTemplate])).toEqual([
      ['Okta', 'live-only'],
      ['Sandbox', null],
    ]);
  });

  it('refuses no redirect URI, more than ten, a wrong one (named), and a template of the other mode', async () => {
    const teamId = await newTeam('refusals');
    const create = (input: Partial<Parameters<typeof clientActions.create>[1]>) =>
      refusal(
        clientActions.create(ctx(teamId), {
          name: 'Okta',
          redirect_uris: [REDIRECT],
          mode: 'test',
          ...input,
        }),
      );

    expect(await create({ redirect_uris: [] })).toMatchObject({
      appCode: 'VALIDATION_ERROR',
      detail: 'redirect_uris: give at least one',
    });
    const uris = (n: number) => Array.from({ length: n }, (_, i) => `https://rp.example/cb/${i}`);
    expect(await create({ redirect_uris: uris(REDIRECT_URI_LIMITS.count + 1) })).toMatchObject({
      detail: 'redirect_uris: at most 10',
    });
    expect(await create({ redirect_uris: uris(REDIRECT_URI_LIMITS.count) })).toBeNull();
    expect(
      await create({ redirect_uris: [REDIRECT, 'https://rp.example/cb#x'], mode: 'live' }),
    ).toMatchObject({ detail: 'redirect_uris: https://rp.example/cb#x must not have a fragment (#…)' });
    expect(await create({ default_template: 'test-only', mode: 'live' })).toMatchObject({
      appCode: 'VALIDATION_ERROR',
      detail: 'default_template: your team has no live template named "test-only"',
    });
    expect(await create({ default_template: 'live-only', mode: 'test' })).toMatchObject({
      detail: 'default_template: your team has no test template named "live-only"',
    });
    expect(await create({ default_template: 'test-only', mode: 'test' })).toBeNull();
    // Nothing refused was kept, nor audited.
    expect(await listClients(database.db, teamId)).toHaveLength(2);
    expect(await auditOf(teamId, 'oidc_client.created')).toHaveLength(2);
  });

  it('registers at most 20 a team', async () => {
    const teamId = await newTeam('twenty');
    for (let i = 0; i < CLIENT_LIMIT; i++) {
      await clientActions.create(ctx(teamId), { name: `c${i}`, redirect_uris: [REDIRECT], mode: 'test' });
    }
    expect(
      await refusal(
        clientActions.create(ctx(teamId), { name: 'one more', redirect_uris: [REDIRECT], mode: 'test' }),
      ),
    ).toMatchObject({
      appCode: 'VALIDATION_ERROR',
      detail: 'A team can register at most 20 identity-provider clients.',
    });
    // Another team is not held to the first one's count.
    const other = await newTeam('other-twenty');
    expect(
      await refusal(clientActions.create(ctx(other), { name: 'c', redirect_uris: [REDIRECT], mode: 'test' })),
    ).toBeNull();
  });
});

describe('a client found, rotated and deleted', () => {
  it('finds a client by id only when the id has its shape; another team’s is none', async () => {
    const teamId = await newTeam('find');
    const other = await newTeam('find-other');
    const { client } = await clientActions.create(ctx(teamId), {
      name: 'Okta',
      redirect_uris: [REDIRECT],
      mode: 'test',
    });
    expect((await findClient(database.db, client.id))?.id).toBe(client.id);
    expect(await findClient(database.db, `${client.id}x`)).toBeNull();
    expect(await findClient(database.db, ` ${client.id}`)).toBeNull();
    expect(isClientId(`${client.id.slice(0, -1)}-`)).toBe(false);
    expect(isClientId('vouch_client_')).toBe(false);
    expect(await findClient(database.db, 'vouch_client_\u0000')).toBeNull();
    // Whole ids only: one with a NUL before or after it (which PostgreSQL refuses in text) is none.
    expect(await findClient(database.db, `${client.id}\u0000`)).toBeNull();
    expect(await findClient(database.db, `\u0000${client.id}`)).toBeNull();
    expect([isClientId(`x${client.id}`), isClientId(`${client.id}x`)]).toEqual([false, false]);
    expect((await findTeamClientOrFail(database.db, teamId, client.id)).id).toBe(client.id);
    for (const [team, id] of [
      [other, client.id],
      [teamId, `${CLIENT_ID_PREFIX}${'0'.repeat(24)}`],
    ] as const) {
      expect(await refusal(findTeamClientOrFail(database.db, team, id))).toMatchObject({
        appCode: 'NOT_FOUND',
        detail: 'No identity-provider client with this id.',
      });
    }
    expect(await refusal(clientActions.rotateSecret(ctx(other), client.id, 60))).toMatchObject({
      appCode: 'NOT_FOUND',
    });
    expect(await refusal(clientActions.delete(ctx(other), client.id))).toMatchObject({
      appCode: 'NOT_FOUND',
    });
    expect(await findClient(database.db, client.id)).not.toBeNull();
  });

  it('rotates: the old secret valid for the grace given, or not at all with none; audited', async () => {
    const teamId = await newTeam('rotate');
    const first = await clientActions.create(ctx(teamId), {
      name: 'Okta',
      redirect_uris: [REDIRECT],
      mode: 'test',
    });
    const withGrace = await clientActions.rotateSecret(ctx(teamId), first.client.id, 3600);
    expect(withGrace.secret).not.toBe(first.secret);
    expect(withGrace.client).toMatchObject({
      secretHash: sha256(withGrace.secret),
      secretHint: withGrace.secret.slice(-4),
      previousSecretHash: sha256(first.secret),
      previousSecretExpiresAt: new Date(now.getTime() + 3_600_000),
      updatedAt: now,
    });
    expect(secretMatches(withGrace.client, first.secret, now)).toBe(true);
    expect(secretMatches(withGrace.client, withGrace.secret, now)).toBe(true);
    const [entry] = await auditOf(teamId, 'oidc_client.secret_rotated');
    expect(entry).toMatchObject({
      target: first.client.id,
      details: { name: 'Okta', livemode: false, grace_seconds: 3600 },
    });

    const noGrace = await clientActions.rotateSecret(ctx(teamId), first.client.id, 0);
    expect(noGrace.client).toMatchObject({ previousSecretHash: null, previousSecretExpiresAt: null });
    expect(secretMatches(noGrace.client, withGrace.secret, now)).toBe(false);
    expect(secretMatches(noGrace.client, noGrace.secret, now)).toBe(true);
    expect(MAX_SECRET_GRACE_SECONDS).toBe(30 * 86_400);
  });

  it('deletes the team’s client, audited with its name and mode', async () => {
    const teamId = await newTeam('delete');
    const kept = await clientActions.create(ctx(teamId), {
      name: 'Kept',
      redirect_uris: [REDIRECT],
      mode: 'test',
    });
    const { client } = await clientActions.create(ctx(teamId), {
      name: 'Okta',
      redirect_uris: [REDIRECT],
      mode: 'live',
    });
    const deleted = await clientActions.delete(ctx(teamId), client.id);
    expect(deleted.client.id).toBe(client.id);
    expect(await findClient(database.db, client.id)).toBeNull();
    expect(await findClient(database.db, kept.client.id)).not.toBeNull();
    const [entry] = await auditOf(teamId, 'oidc_client.deleted');
    expect(entry).toMatchObject({ target: client.id, details: { name: 'Okta', livemode: true } });
  });
});
