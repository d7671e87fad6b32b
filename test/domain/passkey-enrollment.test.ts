/**
 * The closed page's offer to save a passkey, against a real PostgreSQL: made only by a closed case
 * that offered one; a save commits the passkey with `passkey.enrolled` and its audit entry; a case
 * saves one, a declined offer is never made again, and two saves at once cannot take a subject past
 * the limit.
 */
import { and, count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, events, passkeys } from '@/db/schema';
import type { CaseRecord } from '@/server/cases/case-record';
import { findCaseById } from '@/server/cases/case-repository';
import type { Clock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import { createTeam } from '@/server/teams/manage-teams';
import { completeSteps } from '@/server/verification/case-state';
import { MAX_PASSKEYS_PER_SUBJECT } from '@/server/verification/methods/passkey/ceremonies';
import {
  declinePasskeyOffer,
  enrollmentOptions,
  enrollPasskeyOnCase,
  passkeyOffer,
} from '@/server/verification/methods/passkey/enrollment';
import { ceremonyCase } from '@/server/verification/methods/passkey/step';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, openCase, startInProcess } from '@/test/support/in-process';
import { enrollPasskey, TEST_RELYING_PARTY } from '@/test/support/passkeys';
import { SoftwareAuthenticator } from '@/test/support/software-authenticator';

const party = TEST_RELYING_PARTY;
const now = new Date('2026-11-29T10:00:00Z');
const clock: Clock = () => now;

let inProcess: InProcess;
let database: TestDatabase;
let scope: DataScope;

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  const team = (await createTeam(database.db, { name: 'Offers', adminEmail: 'a@offers.test' }, clock)).team;
  scope = { teamId: team.id, livemode: false };
});

afterAll(async () => {
  await inProcess?.close();
});

const reload = async (record: CaseRecord) => {
  const found = await findCaseById(database.db, record.id);
  if (!found) throw new Error('case gone');
  return found;
};

/** A test case for `email` with the e-mail step, closed unless told, offering a passkey unless told. */
async function aCase(email: string, options: { offer?: boolean; close?: boolean } = {}) {
  const opened = await openCase(
    inProcess,
    scope,
    { subject_email: email, verification_methods: { email: true }, offer_passkey: options.offer ?? true },
    clock,
  );
  if (options.close === false) return opened;
  await database.db.transaction((tx) => completeSteps(tx, inProcess.jobs, opened.id, ['email'], now));
  return reload(opened);
}

/** The case's offer taken: options, a software authenticator's new passkey, the save. */
async function save(record: CaseRecord) {
  const options = await enrollmentOptions(database.db, record, party, now);
  if (!options.ok) return options;
  const authenticator = new SoftwareAuthenticator(party.origin);
  return enrollPasskeyOnCase(
    database.db,
    inProcess.jobs,
    record,
    authenticator.register(options.value.challenge),
    party,
    now,
  );
}

describe('the offer of a passkey', () => {
  it('is made by a closed case that offered one, and by no other', async () => {
    expect(await passkeyOffer(database.db, await aCase('o1@offers.test'))).toBe('offer');
    expect(await passkeyOffer(database.db, await aCase('o1@offers.test', { close: false }))).toBeNull();
    const unoffered = await aCase('o1@offers.test', { offer: false });
    expect(await passkeyOffer(database.db, unoffered)).toBeNull();
    await expect(enrollmentOptions(database.db, unoffered, party, now)).resolves.toEqual({
      ok: false,
      why: 'not_offered',
    });
  });

  it('saves the passkey with passkey.enrolled and its audit entry, once per case', async () => {
    const record = await aCase('saver@offers.test');
    const saved = await save(record);
    if (!saved.ok) throw new Error(saved.why);
    expect(saved.value).toMatchObject({
      enrollingCaseId: record.id,
      subjectEmail: 'saver@offers.test',
      livemode: false,
    });
    const [event] = await database.db
      .select()
      .from(events)
      .where(and(eq(events.caseId, record.id), eq(events.type, 'passkey.enrolled')));
    expect(event?.data).toMatchObject({
      passkey_id: saved.value.id,
      case_id: record.id,
      subject_email: 'saver@offers.test',
    });
    const [entry] = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, 'passkey.enrolled'), eq(auditLog.target, saved.value.id)));
    expect(entry?.details).toEqual({ livemode: false, enrolling_case_id: record.id });
    // The page now says it is saved; the case offers no second one.
    expect(await passkeyOffer(database.db, record)).toBe('saved');
    await expect(save(record)).resolves.toEqual({ ok: false, why: 'not_offered' });
  });

  it('is never made again once declined', async () => {
    const record = await aCase('decliner@offers.test');
    await expect(declinePasskeyOffer(database.db, record, now)).resolves.toBe(true);
    const declined = await reload(record);
    expect(declined.passkeyOfferDeclinedAt).toEqual(now);
    expect(await passkeyOffer(database.db, declined)).toBeNull();
    await expect(save(declined)).resolves.toEqual({ ok: false, why: 'not_offered' });
    await expect(declinePasskeyOffer(database.db, declined, now)).resolves.toBe(false);
  });

  it('checks the offer again when the answer comes: options taken before a decline or a save are no use after', async () => {
    const record = await aCase('racer@offers.test');
    const answerTo = async () => {
      const options = await enrollmentOptions(database.db, record, party, now);
      if (!options.ok) throw new Error(options.why);
      return new SoftwareAuthenticator(party.origin).register(options.value.challenge);
    };
    const [first, second] = [await answerTo(), await answerTo()];
    const saved = await enrollPasskeyOnCase(database.db, inProcess.jobs, record, first, party, now);
    expect(saved.ok).toBe(true);
    // The second prompt, answered after the first was saved: the case saves one.
    await expect(
      enrollPasskeyOnCase(database.db, inProcess.jobs, record, second, party, now),
    ).resolves.toEqual({ ok: false, why: 'not_offered' });

    const declining = await aCase('changed-mind@offers.test');
    const options = await enrollmentOptions(database.db, declining, party, now);
    if (!options.ok) throw new Error(options.why);
    await declinePasskeyOffer(database.db, declining, now);
    const late = new SoftwareAuthenticator(party.origin).register(options.value.challenge);
    await expect(
      enrollPasskeyOnCase(database.db, inProcess.jobs, await reload(declining), late, party, now),
    ).resolves.toEqual({ ok: false, why: 'not_offered' });
  });

  it('lets two saves at once take a subject to the limit and no further', async () => {
    const email = 'many@offers.test';
    const first = await aCase(email, { offer: false });
    for (let i = 0; i < MAX_PASSKEYS_PER_SUBJECT - 1; i += 1) {
      await enrollPasskey(database.db, ceremonyCase(first), clock);
    }
    const [one, two] = [await aCase(email), await aCase(email)];
    // Both pages got their options while the subject held nine.
    const options = await Promise.all(
      [one, two].map((record) => enrollmentOptions(database.db, record, party, now)),
    );
    const answers = options.map((option) => {
      if (!option.ok) throw new Error(option.why);
      return new SoftwareAuthenticator(party.origin).register(option.value.challenge);
    });
    const results = await Promise.all(
      [one, two].map((record, i) =>
        enrollPasskeyOnCase(database.db, inProcess.jobs, record, answers[i] as never, party, now),
      ),
    );
    expect(results.filter((result) => result.ok)).toHaveLength(1);
    const [held] = await database.db
      .select({ n: count() })
      .from(passkeys)
      .where(and(eq(passkeys.teamId, scope.teamId), eq(passkeys.subjectEmail, email)));
    expect(held?.n).toBe(MAX_PASSKEYS_PER_SUBJECT);
  });
});
