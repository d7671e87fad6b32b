import { z } from 'zod';

/**
 * How a template is named: what a case's `template` and an identity provider's scope
 * (`idv_flow_<name>`, a token of a space-separated list) say, so letters, digits, `-` and `_` only.
 */
export const TEMPLATE_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;

export const templateNameInput = z.string().regex(TEMPLATE_NAME, {
  error: 'must be 1 to 40 lowercase letters, digits, - or _, starting with a letter or a digit',
});
