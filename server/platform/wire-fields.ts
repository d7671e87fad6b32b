import { z } from 'zod';

/** Text that must hold something once trimmed, and at most `max` characters. */
export const requiredText = (max: number) =>
  z
    .string()
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` });

/** An e-mail address as the API accepts it (at most 254 characters, RFC 5321's limit). */
export const emailAddress = z.email().max(254);

/**
 * A JSON boolean and nothing else. trpc-to-openapi switches `z.boolean()` inputs to coercion on
 * the first REST request (so `"false"` would read as true); a literal union is left alone.
 */
export const jsonBoolean = z.union([z.literal(true), z.literal(false)], { error: 'must be true or false' });

const isoDateTime = z.iso.datetime({ offset: true });

/** The `created_after` and `created_before` filters of every list. */
export const createdRange = {
  created_after: isoDateTime
    .meta({
      description: 'Only what was created after this instant (exclusive): ISO 8601 with a time zone.',
      examples: ['2026-01-01T00:00:00Z'],
    })
    .optional(),
  created_before: isoDateTime
    .meta({
      description: 'Only what was created before this instant (exclusive): ISO 8601 with a time zone.',
      examples: ['2026-02-01T00:00:00+01:00'],
    })
    .optional(),
};
