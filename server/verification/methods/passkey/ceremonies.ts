import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { and, count, eq, gt, sql } from 'drizzle-orm';
import type { Db, Queryable } from '@/db/client';
import { deleteInBatches } from '@/db/delete-in-batches';
import { passkeyChallenges, passkeys } from '@/db/schema';
import type { Clock } from '@/server/platform/clock';

/**
 * WebAuthn's two ceremonies for the subject's pages, per the Level 3 recommendation: a passkey is
 * saved (registration) at the end of a verified case and proven (authentication) by a later one.
 * The relying party is the pages' own host (VERIFY_URL_BASE): its id the host name, the expected
 * origin its origin. User verification is required both ways; attestation is `none` (a workforce
 * service trusts the person it verified, not the authenticator's maker); EdDSA, ES256 and RS256.
 *
 * Each challenge is bound to one case and one ceremony, good once for CHALLENGE_SECONDS: checking
 * an answer consumes its challenge first, so a replayed answer, or one made for another case or the
 * other ceremony, finds none. The library (`@simplewebauthn/server`) checks the rest: the origin,
 * the relying party's id, the flags, the signature, and that the signature counter moved forward.
 */

/** A passkey is bound to a subject of one team and one mode. */
export interface PasskeySubject {
  teamId: string;
  livemode: boolean;
  subjectEmail: string;
}

/** The case a ceremony runs for. */
export interface CeremonyCase extends PasskeySubject {
  caseId: string;
}

/** Who the pages are: VERIFY_URL_BASE. */
export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

export function relyingPartyOf(pageBase: string): RelyingParty {
  const url = new URL(pageBase);
  return { id: url.hostname, origin: url.origin, name: 'Vouch' };
}

/** How long a ceremony's challenge stays good: the browser's own prompt times out at 5 minutes. */
export const CHALLENGE_SECONDS = 300;
/** Passkeys a subject may hold per team and mode. */
export const MAX_PASSKEYS_PER_SUBJECT = 10;
/** EdDSA, ES256, RS256 (COSE algorithm ids). */
const ALGORITHMS = [-8, -7, -257];

/** Why a ceremony's answer was refused: each named, for the step's failure count and the log. */
export type CeremonyRefusal =
  | 'malformed'
  | 'challenge_unknown'
  | 'wrong_origin'
  | 'wrong_relying_party'
  | 'user_not_verified'
  | 'unknown_passkey'
  | 'counter_regressed'
  | 'bad_signature'
  | 'too_many_passkeys'
  | 'already_enrolled';

export type CeremonyResult<T> = { ok: true; value: T } | { ok: false; why: CeremonyRefusal };

/** The library's words for what it refused (its errors carry no codes), most specific first. */
const REFUSALS: Array<[RegExp, CeremonyRefusal]> = [
  [/origin/i, 'wrong_origin'],
  [/RP ?ID/i, 'wrong_relying_party'],
  [/user verification|could not be verified/i, 'user_not_verified'],
  [/counter/i, 'counter_regressed'],
  [/challenge/i, 'challenge_unknown'],
];

/** The library's check of an answer, its throw turned into the refusal it names. */
async function libraryVerdict<T>(verify: () => Promise<T>): Promise<CeremonyResult<T>> {
  try {
    return { ok: true, value: await verify() };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, why: REFUSALS.find(([pattern]) => pattern.test(message))?.[1] ?? 'malformed' };
  }
}

/** The passkeys of a subject in one team and mode, as a condition. */
function ofSubject(subject: PasskeySubject) {
  return and(
    eq(passkeys.teamId, subject.teamId),
    eq(passkeys.livemode, subject.livemode),
    eq(passkeys.subjectEmail, subject.subjectEmail),
  );
}

/** A subject's passkeys in one team and mode. */
export function subjectPasskeys(db: Queryable, subject: PasskeySubject) {
  return db.select().from(passkeys).where(ofSubject(subject)).orderBy(passkeys.createdAt);
}

async function issueChallenge(
  db: Queryable,
  ceremony: CeremonyCase,
  kind: 'registration' | 'authentication',
  challenge: string,
  clock: Clock,
): Promise<void> {
  await db.insert(passkeyChallenges).values({
    challenge,
    caseId: ceremony.caseId,
    ceremony: kind,
    expiresAt: new Date(clock().getTime() + CHALLENGE_SECONDS * 1000),
  });
}

/**
 * Consumes a challenge if it was issued for this case and ceremony and is still good: true once,
 * false ever after (and for another case's, the other ceremony's or an unknown one).
 */
async function consumeChallenge(
  db: Queryable,
  ceremony: CeremonyCase,
  kind: 'registration' | 'authentication',
  challenge: string,
  clock: Clock,
): Promise<boolean> {
  const consumed = await db
    .delete(passkeyChallenges)
    .where(
      and(
        eq(passkeyChallenges.challenge, challenge),
        eq(passkeyChallenges.caseId, ceremony.caseId),
        eq(passkeyChallenges.ceremony, kind),
        gt(passkeyChallenges.expiresAt, clock()),
      ),
    )
    .returning({ challenge: passkeyChallenges.challenge });
  return consumed.length === 1;
}

/** Options for the browser's `navigator.credentials.create()`: saving a passkey for this subject. */
export async function registrationOptions(
  db: Queryable,
  ceremony: CeremonyCase,
  party: RelyingParty,
  clock: Clock,
): Promise<CeremonyResult<PublicKeyCredentialCreationOptionsJSON>> {
  const held = await subjectPasskeys(db, ceremony);
  if (held.length >= MAX_PASSKEYS_PER_SUBJECT) return { ok: false, why: 'too_many_passkeys' };
  const options = await generateRegistrationOptions({
    rpName: party.name,
    rpID: party.id,
    userName: ceremony.subjectEmail,
    attestationType: 'none',
    // The authenticators that already hold one of this subject's passkeys say so instead.
    excludeCredentials: held.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    supportedAlgorithmIDs: ALGORITHMS,
    timeout: CHALLENGE_SECONDS * 1000,
  });
  await issueChallenge(db, ceremony, 'registration', options.challenge, clock);
  return { ok: true, value: options };
}

/** A passkey as a ceremony saved or used it. */
export type PasskeyRow = typeof passkeys.$inferSelect;

/** Checks the browser's answer to registrationOptions and saves the passkey, bound to the case. */
export async function savePasskey(
  db: Queryable,
  ceremony: CeremonyCase,
  response: RegistrationResponseJSON,
  party: RelyingParty,
  clock: Clock,
): Promise<CeremonyResult<PasskeyRow>> {
  const verified = await libraryVerdict(() =>
    verifyRegistrationResponse({
      response,
      expectedChallenge: (challenge) => consumeChallenge(db, ceremony, 'registration', challenge, clock),
      expectedOrigin: party.origin,
      expectedRPID: party.id,
      requireUserVerification: true,
      supportedAlgorithmIDs: ALGORITHMS,
    }),
  );
  if (!verified.ok) return verified;
  if (!verified.value.verified) return { ok: false, why: 'bad_signature' };
  const info = verified.value.registrationInfo;
  const [{ held } = { held: 0 }] = await db
    .select({ held: count() })
    .from(passkeys)
    .where(ofSubject(ceremony));
  if (held >= MAX_PASSKEYS_PER_SUBJECT) return { ok: false, why: 'too_many_passkeys' };
  const [saved] = await db
    .insert(passkeys)
    .values({
      teamId: ceremony.teamId,
      livemode: ceremony.livemode,
      subjectEmail: ceremony.subjectEmail,
      credentialId: info.credential.id,
      publicKey: isoBase64URL.fromBuffer(info.credential.publicKey),
      counter: info.credential.counter,
      transports: info.credential.transports ?? [],
      deviceType: info.credentialDeviceType,
      backedUp: info.credentialBackedUp,
      enrollingCaseId: ceremony.caseId,
      createdAt: clock(),
    })
    .onConflictDoNothing({ target: passkeys.credentialId })
    .returning();
  return saved ? { ok: true, value: saved } : { ok: false, why: 'already_enrolled' };
}

/**
 * Options for the browser's `navigator.credentials.get()`: proving one of this subject's passkeys
 * (the team's and mode's only). None when the subject has none.
 */
export async function authenticationOptions(
  db: Queryable,
  ceremony: CeremonyCase,
  party: RelyingParty,
  clock: Clock,
): Promise<CeremonyResult<PublicKeyCredentialRequestOptionsJSON>> {
  const held = await subjectPasskeys(db, ceremony);
  if (held.length === 0) return { ok: false, why: 'unknown_passkey' };
  const options = await generateAuthenticationOptions({
    rpID: party.id,
    allowCredentials: held.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
    userVerification: 'required',
    timeout: CHALLENGE_SECONDS * 1000,
  });
  await issueChallenge(db, ceremony, 'authentication', options.challenge, clock);
  return { ok: true, value: options };
}

/**
 * Checks the browser's answer to authenticationOptions: a passkey of this subject, in this team and
 * mode, signed this case's challenge with the user verified and its counter moved forward. The
 * counter and last use are written only if no other check of the same passkey wrote them first
 * (a cloned authenticator racing the real one loses).
 */
export async function provePasskey(
  db: Queryable,
  ceremony: CeremonyCase,
  response: AuthenticationResponseJSON,
  party: RelyingParty,
  clock: Clock,
): Promise<CeremonyResult<PasskeyRow>> {
  if (typeof response?.id !== 'string') return { ok: false, why: 'malformed' };
  const [passkey] = await db
    .select()
    .from(passkeys)
    .where(and(eq(passkeys.credentialId, response.id), ofSubject(ceremony)));
  if (!passkey) return { ok: false, why: 'unknown_passkey' };
  const verdict = await libraryVerdict(() =>
    verifyAuthenticationResponse({
      response,
      expectedChallenge: (challenge) => consumeChallenge(db, ceremony, 'authentication', challenge, clock),
      expectedOrigin: party.origin,
      expectedRPID: party.id,
      credential: {
        id: passkey.credentialId,
        publicKey: isoBase64URL.toBuffer(passkey.publicKey),
        counter: passkey.counter,
        transports: passkey.transports,
      },
      requireUserVerification: true,
    }),
  );
  if (!verdict.ok) return verdict;
  const verified = verdict.value;
  if (!verified.verified) return { ok: false, why: 'bad_signature' };
  const [used] = await db
    .update(passkeys)
    .set({
      counter: verified.authenticationInfo.newCounter,
      backedUp: verified.authenticationInfo.credentialBackedUp,
      lastUsedAt: clock(),
    })
    .where(and(eq(passkeys.id, passkey.id), eq(passkeys.counter, passkey.counter)))
    .returning();
  return used ? { ok: true, value: used } : { ok: false, why: 'counter_regressed' };
}

/** Redaction: the passkeys a case enrolled go with the subject's other personal data. */
export async function deletePasskeysEnrolledBy(db: Queryable, caseId: string): Promise<number> {
  const deleted = await db
    .delete(passkeys)
    .where(eq(passkeys.enrollingCaseId, caseId))
    .returning({ id: passkeys.id });
  return deleted.length;
}

/** Revokes one passkey of a team's mode (its row deleted): the passkey, or null when there is none such. */
export async function takePasskey(
  db: Queryable,
  scope: { teamId: string; livemode: boolean },
  id: string,
): Promise<PasskeyRow | null> {
  const [taken] = await db
    .delete(passkeys)
    .where(and(eq(passkeys.id, id), eq(passkeys.teamId, scope.teamId), eq(passkeys.livemode, scope.livemode)))
    .returning();
  return taken ?? null;
}

/**
 * The daily clean-up's part: challenges past their time (an answer checked consumes its own, so
 * these are ceremonies a browser began and never finished), in batches.
 */
export function purgeExpiredChallenges(db: Db, now: Date): Promise<number> {
  return deleteInBatches(db, passkeyChallenges, sql`${passkeyChallenges.expiresAt} <= ${now.toISOString()}`);
}
