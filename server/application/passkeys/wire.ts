import { z } from 'zod';
import { EXAMPLE_CASE } from '@/server/cases/example-case';
import { EXAMPLE_PASSKEY_ID } from '@/server/events/wire';
import { emailAddress } from '@/server/platform/wire-fields';
import type { PasskeyRow } from '@/server/verification/methods/passkey/ceremonies';

/** `GET /v1/passkeys/`: whose passkeys. */
export const listPasskeysInput = z.strictObject({
  subject_email: emailAddress.meta({
    description: 'The subject whose passkeys to list, as their cases name them.',
    examples: [EXAMPLE_CASE.subjectEmail],
  }),
});

/** The `{id}` of the passkey route. */
export const passkeyIdInput = z.object({
  id: z
    .uuid({ error: 'must be a passkey id (a UUID)' })
    .meta({ description: 'The passkey’s id.', examples: [EXAMPLE_PASSKEY_ID] }),
});

/** A passkey as the API shows it: never its public key. */
export const passkeyOutput = z
  .object({
    id: z.uuid().meta({ description: 'The passkey’s id.', examples: [EXAMPLE_PASSKEY_ID] }),
    subject_email: z
      .string()
      .meta({ description: 'Whose passkey it is.', examples: [EXAMPLE_CASE.subjectEmail] }),
    livemode: z.boolean().meta({ description: '`false` for a test-mode passkey.', examples: [true] }),
    enrolling_case_id: z
      .uuid()
      .meta({ description: 'The verified case at whose end it was saved.', examples: [EXAMPLE_CASE.id] }),
    device_type: z.enum(['single_device', 'multi_device']).meta({
      description:
        '`multi_device`: a passkey its platform syncs between the person’s devices; `single_device`: bound to one authenticator.',
      examples: ['multi_device'],
    }),
    backed_up: z
      .boolean()
      .meta({ description: 'Whether the platform says it is backed up (synced).', examples: [true] }),
    created_at: z.string().meta({ description: 'When it was saved.', examples: [EXAMPLE_CASE.createdAt] }),
    last_used_at: z
      .string()
      .nullable()
      .meta({ description: 'When a case last verified the person by it; null: never.', examples: [null] }),
  })
  .meta({ id: 'Passkey' });

const EXAMPLE_PASSKEY: z.infer<typeof passkeyOutput> = {
  id: EXAMPLE_PASSKEY_ID,
  subject_email: EXAMPLE_CASE.subjectEmail,
  livemode: true,
  enrolling_case_id: EXAMPLE_CASE.id,
  device_type: 'multi_device',
  backed_up: true,
  created_at: EXAMPLE_CASE.createdAt,
  last_used_at: null,
};

export const passkeyListOutput = z
  .object({
    results: z.array(passkeyOutput).meta({
      description: 'The subject’s passkeys in this key’s mode, oldest first (at most 10).',
      examples: [[EXAMPLE_PASSKEY]],
    }),
  })
  .meta({ id: 'PasskeyList' });

export type PasskeyWire = z.infer<typeof passkeyOutput>;

export function toPasskeyWire(passkey: PasskeyRow): PasskeyWire {
  return {
    id: passkey.id,
    subject_email: passkey.subjectEmail,
    livemode: passkey.livemode,
    enrolling_case_id: passkey.enrollingCaseId,
    device_type: passkey.deviceType === 'multiDevice' ? 'multi_device' : 'single_device',
    backed_up: passkey.backedUp,
    created_at: passkey.createdAt.toISOString(),
    last_used_at: passkey.lastUsedAt?.toISOString() ?? null,
  };
}
