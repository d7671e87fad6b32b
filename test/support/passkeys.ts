import type { Queryable } from '@/db/client';
import { cases } from '@/db/schema';
import { type Clock, systemClock } from '@/server/platform/clock';
import { newPublicId, newRowId } from '@/server/platform/ids';
import {
  type CeremonyCase,
  type RelyingParty,
  registrationOptions,
  relyingPartyOf,
  savePasskey,
} from '@/server/verification/methods/passkey/ceremonies';
import { SoftwareAuthenticator } from './software-authenticator';

/** The pages' relying party in the tests that enroll passkeys outside the pages. */
export const TEST_RELYING_PARTY = relyingPartyOf('https://verify.vouch.test');

/**
 * A case written straight into the table (open unless told; a day to live), as the ceremonies see
 * it: a passkey's enrolling case, or the case a later ceremony runs for.
 */
export async function insertCase(
  db: Queryable,
  subject: { teamId: string; livemode: boolean; subjectEmail: string; status?: 'open' | 'closed' },
): Promise<CeremonyCase> {
  const caseId = newRowId();
  await db.insert(cases).values({
    id: caseId,
    teamId: subject.teamId,
    livemode: subject.livemode,
    publicId: newPublicId(),
    subjectEmail: subject.subjectEmail,
    status: subject.status ?? 'open',
    expiresAt: new Date(Date.now() + 86_400_000),
  });
  return { caseId, teamId: subject.teamId, livemode: subject.livemode, subjectEmail: subject.subjectEmail };
}

/**
 * A passkey saved for the case's subject by a software authenticator, through the registration
 * ceremony as the pages run it (for `party`: a running service's pages are their own): its id,
 * and the authenticator that holds it.
 */
export async function enrollPasskey(
  db: Queryable,
  ceremony: CeremonyCase,
  clock: Clock = systemClock,
  party: RelyingParty = TEST_RELYING_PARTY,
): Promise<{ id: string; authenticator: SoftwareAuthenticator }> {
  const options = await registrationOptions(db, ceremony, party, clock);
  if (!options.ok) throw new Error(options.why);
  const authenticator = new SoftwareAuthenticator(party.origin);
  const saved = await savePasskey(
    db,
    ceremony,
    authenticator.register(options.value.challenge),
    party,
    clock,
  );
  if (!saved.ok) throw new Error(saved.why);
  return { id: saved.value.id, authenticator };
}
