import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Db } from '@/db/client';
import { signingKeyEncryptionKey } from '@/server/signing/signing-secret';
import type { AnswerKeeper } from '@/server/verification/methods/custom-question/answer';

/**
 * An import's draft checks every row at once, and hashing each custom answer with scrypt there
 * would let one team's drafts take the web process's CPU (500 answers a draft, nothing created or
 * charged). So a draft seals each answer instead (AES-256-GCM, microseconds), and the worker
 * hashes it when the row is created, in its turn. The sealing key never touches the database: it
 * is derived from the secret the signing keys are encrypted under (KEYS_SECRET), so a copy
 * of the database alone reads no answer, sealed or hashed.
 */
export async function importAnswerKey(db: Db, signingKeySecret: string | undefined): Promise<Buffer> {
  const kek = await signingKeyEncryptionKey(db, signingKeySecret);
  return Buffer.from(hkdfSync('sha256', kek, '', 'vouch import answers v1', 32));
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** An AnswerKeeper that seals each answer for the team's import (bound to the team: AAD). */
export function sealingAnswers(key: Buffer, teamId: string): AnswerKeeper {
  return async (answer) => {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(teamId));
    const sealed = Buffer.concat([iv, cipher.update(answer, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return { answer_sealed: sealed.toString('base64url') };
  };
}

/** The answer a draft sealed for `teamId`; throws when the key or the team is not the one it was sealed with. */
export function unsealAnswer(key: Buffer, teamId: string, sealed: string): string {
  const bytes = Buffer.from(sealed, 'base64url');
  const iv = bytes.subarray(0, IV_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(teamId));
  decipher.setAuthTag(tag);
  return Buffer.concat([
    decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
    decipher.final(),
  ]).toString('utf8');
}
