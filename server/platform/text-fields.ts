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
