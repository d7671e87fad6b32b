/**
 * Both WebAuthn ceremonies against a real PostgreSQL, answered by a software authenticator as a
 * browser would hand the page its answer. Every refusal has its positive control beside it: the
 * same authenticator, the same case, only the one thing bent.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passkeyChallenges, passkeys } from '@/db/schema';
import { redactCase } from '@/server/application/cases/redact-case';
import type { Clock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import {
  authenticationOptions,
  type CeremonyCase,
  deletePasskeysEnrolledBy,
  MAX_PASSKEYS_PER_SUBJECT,
  provePasskey,
  purgeExpiredChallenges,
  registrationOptions,
  savePasskey,
  takePasskey,
} from '@/server/verification/methods/passkey/ceremonies';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, startInProcess } from '@/test/support/in-process';
import { enrollPasskey, insertCase, TEST_RELYING_PARTY } from '@/test/support/passkeys';
import { SoftwareAuthenticator } from '@/test/support/software-authenticator';

const party = TEST_RELYING_PARTY;
let now = new Date('2026-11-29T10:00:00Z');
const clock: Clock = () => now;

let inProcess: InProcess;
let database: TestDatabase;
let teamId: string;
let otherTeamId: string;

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  teamId = (await createTeam(database.db, { name: 'Passkeys', adminEmail: 'a@pk.test' }, clock)).team.id;
  otherTeamId = (await createTeam(database.db, { name: 'Others', adminEmail: 'a@other.test' }, clock)).team
    .id;
});

afterAll(async () => {
  await inProcess?.close();
});

/** A case of the team for `email` (live unless told), as the ceremonies see it. */
function aCase(email: string, options: { team?: string; livemode?: boolean } = {}): Promise<CeremonyCase> {
  return insertCase(database.db, {
    teamId: options.team ?? teamId,
    livemode: options.livemode ?? true,
    subjectEmail: email,
  });
}

/** Enrolls a new authenticator for the case's subject; returns it. */
async function enrolled(ceremony: CeremonyCase): Promise<SoftwareAuthenticator> {
  return (await enrollPasskey(database.db, ceremony, clock)).authenticator;
}

async function challengeFor(ceremony: CeremonyCase): Promise<string> {
  const options = await authenticationOptions(database.db, ceremony, party, clock);
  if (!options.ok) throw new Error(options.why);
  return options.value.challenge;
}

/** The case's answer checked as the pages check it. */
function answer(ceremony: CeremonyCase, response: Parameters<typeof provePasskey>[2]) {
  return provePasskey(database.db, ceremony, response, party, clock);
}

/** A fresh challenge for the case, signed by the authenticator (bent as told) and checked. */
async function proveFresh(
  ceremony: CeremonyCase,
  authenticator: SoftwareAuthenticator,
  bend?: Parameters<SoftwareAuthenticator['authenticate']>[1],
) {
  return answer(ceremony, authenticator.authenticate(await challengeFor(ceremony), bend));
}

describe('saving a passkey', () => {
  it('binds it to the team, mode and subject with the case that enrolled it; none of the bent answers is saved', async () => {
    const ceremony = await aCase('save@pk.test');
    const options = await registrationOptions(database.db, ceremony, party, clock);
    if (!options.ok) throw new Error(options.why);
    expect(options.value).toMatchObject({
      rp: { id: 'verify.vouch.test', name: 'Vouch' },
      attestation: 'none',
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    });
    expect(options.value.pubKeyCredParams.map((param) => param.alg)).toEqual([-8, -7, -257]);

    const bent = async (answer: Parameters<SoftwareAuthenticator['register']>[1]) => {
      const fresh = await registrationOptions(database.db, ceremony, party, clock);
      if (!fresh.ok) throw new Error(fresh.why);
      const authenticator = new SoftwareAuthenticator(party.origin);
      return savePasskey(
        database.db,
        ceremony,
        authenticator.register(fresh.value.challenge, answer),
        party,
        clock,
      );
    };
    expect(await bent({ origin: 'https://evil.test' })).toEqual({ ok: false, why: 'wrong_origin' });
    expect(await bent({ rpId: 'evil.test' })).toEqual({ ok: false, why: 'wrong_relying_party' });
    expect(await bent({ userVerified: false })).toEqual({ ok: false, why: 'user_not_verified' });
    expect(
      await database.db.select().from(passkeys).where(eq(passkeys.subjectEmail, 'save@pk.test')),
    ).toEqual([]);

    // The positive control: the same ceremony, unbent.
    const authenticator = new SoftwareAuthenticator(party.origin);
    const saved = await savePasskey(
      database.db,
      ceremony,
      authenticator.register(options.value.challenge),
      party,
      clock,
    );
    expect(saved).toMatchObject({
      ok: true,
      value: {
        teamId,
        livemode: true,
        subjectEmail: 'save@pk.test',
        credentialId: authenticator.credentialId,
        enrollingCaseId: ceremony.caseId,
        counter: 0,
        deviceType: 'singleDevice',
        backedUp: false,
        transports: ['internal'],
      },
    });
    // Its challenge was good once.
    const again = await savePasskey(
      database.db,
      ceremony,
      new SoftwareAuthenticator(party.origin).register(options.value.challenge),
      party,
      clock,
    );
    expect(again).toEqual({ ok: false, why: 'challenge_unknown' });
  });

  it(`refuses an 11th passkey of one subject in a team and mode (${MAX_PASSKEYS_PER_SUBJECT} at most)`, async () => {
    const ceremony = await aCase('many@pk.test');
    for (let i = 0; i < MAX_PASSKEYS_PER_SUBJECT; i += 1) await enrolled(ceremony);
    expect(await registrationOptions(database.db, ceremony, party, clock)).toEqual({
      ok: false,
      why: 'too_many_passkeys',
    });
    // Another mode's count is its own.
    await enrolled(await aCase('many@pk.test', { livemode: false }));
  });
});

describe('proving a passkey', () => {
  it('verifies the subject by it, moving its counter and last use; a replay and a backwards counter are refused', async () => {
    const enrolling = await aCase('prove@pk.test');
    const authenticator = await enrolled(enrolling);
    const later = await aCase('prove@pk.test');

    now = new Date(now.getTime() + 60_000);
    const signed = authenticator.authenticate(await challengeFor(later));
    const proved = await answer(later, signed);
    expect(proved).toMatchObject({
      ok: true,
      value: { counter: 1, lastUsedAt: now, enrollingCaseId: enrolling.caseId },
    });

    // The same answer again: its challenge is spent.
    expect(await answer(later, signed)).toEqual({
      ok: false,
      why: 'challenge_unknown',
    });
    // A counter that goes backwards (a cloned authenticator), beside one that moves on.
    expect(await proveFresh(later, authenticator, { counter: 1 })).toEqual({
      ok: false,
      why: 'counter_regressed',
    });
    expect(await proveFresh(later, authenticator, { counter: 5 })).toMatchObject({
      ok: true,
      value: { counter: 5 },
    });
  });

  it('refuses the wrong origin, relying party and a missing user verification, each beside its control', async () => {
    const ceremony = await aCase('bent@pk.test');
    const authenticator = await enrolled(ceremony);
    const prove = (bend: Parameters<SoftwareAuthenticator['authenticate']>[1]) =>
      proveFresh(ceremony, authenticator, bend);
    expect(await prove({ origin: 'https://verify.vouch.test.evil.test' })).toEqual({
      ok: false,
      why: 'wrong_origin',
    });
    expect(await prove({ rpId: 'vouch.test' })).toEqual({ ok: false, why: 'wrong_relying_party' });
    expect(await prove({ userVerified: false })).toEqual({ ok: false, why: 'user_not_verified' });
    expect(await prove({})).toMatchObject({ ok: true });
  });

  it("refuses another case's challenge and an expired one", async () => {
    const ceremony = await aCase('cases@pk.test');
    const authenticator = await enrolled(ceremony);
    const other = await aCase('cases@pk.test');
    const othersChallenge = await challengeFor(other);
    expect(await answer(ceremony, authenticator.authenticate(othersChallenge))).toEqual({
      ok: false,
      why: 'challenge_unknown',
    });
    // Still good for its own case: refusing it above did not spend it.
    expect(await answer(other, authenticator.authenticate(othersChallenge))).toMatchObject({
      ok: true,
    });

    const challenge = await challengeFor(ceremony);
    now = new Date(now.getTime() + 301_000);
    expect(await answer(ceremony, authenticator.authenticate(challenge))).toEqual({
      ok: false,
      why: 'challenge_unknown',
    });
    expect(await proveFresh(ceremony, authenticator)).toMatchObject({ ok: true });
  });

  it("refuses another team's, another mode's, another subject's, a revoked and a redacted case's passkey", async () => {
    const enrolling = await aCase('owner@pk.test');
    const authenticator = await enrolled(enrolling);
    const attempt = async (ceremony: CeremonyCase) => {
      // The subject's own options may be none: the challenge is then issued as for the owner's case.
      const options = await authenticationOptions(database.db, ceremony, party, clock);
      const challenge = options.ok ? options.value.challenge : await challengeFor(enrolling);
      return answer(ceremony, authenticator.authenticate(challenge));
    };
    expect(await attempt(await aCase('owner@pk.test', { team: otherTeamId }))).toEqual({
      ok: false,
      why: 'unknown_passkey',
    });
    expect(await attempt(await aCase('owner@pk.test', { livemode: false }))).toEqual({
      ok: false,
      why: 'unknown_passkey',
    });
    expect(await attempt(await aCase('someone-else@pk.test'))).toEqual({ ok: false, why: 'unknown_passkey' });
    expect(await attempt(await aCase('owner@pk.test'))).toMatchObject({ ok: true });

    // Revoked (by its team and mode only): unknown from then on; another enrolled for the test below.
    const revoked = await enrolled(enrolling);
    const revokedId =
      (await database.db.select().from(passkeys).where(eq(passkeys.credentialId, revoked.credentialId)))[0]
        ?.id ?? '';
    expect(await takePasskey(database.db, { teamId: otherTeamId, livemode: true }, revokedId)).toBeNull();
    expect(await takePasskey(database.db, { teamId, livemode: false }, revokedId)).toBeNull();
    expect(await takePasskey(database.db, { teamId, livemode: true }, revokedId)).toMatchObject({
      id: revokedId,
    });
    const afterRevoke = await aCase('owner@pk.test');
    expect(await proveFresh(afterRevoke, revoked)).toEqual({ ok: false, why: 'unknown_passkey' });

    // Redacting the enrolling case deletes what it enrolled: the passkey is unknown from then on.
    expect(await deletePasskeysEnrolledBy(database.db, enrolling.caseId)).toBe(1);
    const after = await aCase('owner@pk.test');
    expect(await authenticationOptions(database.db, after, party, clock)).toEqual({
      ok: false,
      why: 'unknown_passkey',
    });
    const challenge = await challengeFor(
      await aCase('keeper@pk.test').then(async (c) => {
        await enrolled(c);
        return c;
      }),
    );
    expect(await answer(after, authenticator.authenticate(challenge))).toEqual({
      ok: false,
      why: 'unknown_passkey',
    });
  });

  it('refuses an answer that is not one', async () => {
    const ceremony = await aCase('junk@pk.test');
    await enrolled(ceremony);
    expect(await answer(ceremony, {} as never)).toEqual({
      ok: false,
      why: 'malformed',
    });
    expect(await answer(ceremony, null as never)).toEqual({
      ok: false,
      why: 'malformed',
    });
  });
});

describe('redacting the case that enrolled passkeys', () => {
  it('deletes them, and only them', async () => {
    const enrolling = await aCase('redacted@pk.test');
    await enrolled(enrolling);
    await enrolled(enrolling);
    const kept = await aCase('redacted@pk.test');
    await enrolled(kept);
    await redactCase(database.db, { teamId, livemode: true }, enrolling.caseId, {
      clock,
      jobs: inProcess.jobs,
    });
    const left = await database.db
      .select()
      .from(passkeys)
      .where(eq(passkeys.subjectEmail, 'redacted@pk.test'));
    expect(left.map((passkey) => passkey.enrollingCaseId)).toEqual([kept.caseId]);
  });
});

describe('challenges never answered', () => {
  it('are deleted once past their time, and only those', async () => {
    const ceremony = await aCase('purge@pk.test');
    await enrolled(ceremony);
    const stale = await challengeFor(ceremony);
    now = new Date(now.getTime() + 301_000);
    const fresh = await challengeFor(ceremony);
    const left = async () =>
      (
        await database.db
          .select()
          .from(passkeyChallenges)
          .where(eq(passkeyChallenges.caseId, ceremony.caseId))
      ).map((row) => row.challenge);
    expect(await left()).toEqual(expect.arrayContaining([stale, fresh]));
    expect(await purgeExpiredChallenges(database.db, now)).toBeGreaterThanOrEqual(1);
    expect(await left()).toEqual([fresh]);
  });
});
