import type { Queryable } from '@/db/client';
import {
  type CeremonyCase,
  registrationOptions,
  relyingPartyOf,
  savePasskey,
} from '@/server/passkeys/ceremonies';
import { systemClock } from '@/server/platform/clock';
import { SoftwareAuthenticator } from './software-authenticator';

/** The pages' relying party in the tests that enroll passkeys outside the pages. */
export const TEST_RELYING_PARTY = relyingPartyOf('https://verify.vouch.test');

/**
 * A passkey saved for the case's subject by a software authenticator, through the registration
 * ceremony as the pages run it: its id, and the authenticator that holds it.
 */
export async function enrollPasskey(
  db: Queryable,
  ceremony: CeremonyCase,
): Promise<{ id: string; authenticator: SoftwareAuthenticator }> {
  const options = await registrationOptions(db, ceremony, TEST_RELYING_PARTY, systemClock);
  if (!options.ok) throw new Error(options.why);
  const authenticator = new SoftwareAuthenticator(TEST_RELYING_PARTY.origin);
  const saved = await savePasskey(
    db,
    ceremony,
    authenticator.register(options.value.challenge),
    TEST_RELYING_PARTY,
    systemClock,
  );
  if (!saved.ok) throw new Error(saved.why);
  return { id: saved.value.id, authenticator };
}
