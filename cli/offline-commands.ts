import { readFile } from 'node:fs/promises';
import { base64url, type JWK } from 'jose';
import { pdfAttachments } from '@/server/evidence/pdf-attachment';
import { evidenceSummary, verifyEvidence } from '@/server/evidence/verify-evidence';
import { commandUsage, type OfflineCommandName, UsageError, type Values } from './usage';

/** The operator commands that work on files alone: no database is opened. */

/** The record in FILE: the signed JSON itself, or the one attached to an evidence PDF. */
async function recordText(file: string): Promise<string> {
  const bytes = await readFile(file);
  if (bytes.subarray(0, 5).toString('latin1') !== '%PDF-') return bytes.toString('utf8');
  const attached = [...(await pdfAttachments(bytes)).entries()].filter(([name]) => name.endsWith('.json'));
  const [first] = attached;
  if (!first || attached.length > 1) {
    throw new Error(`${file}: the PDF does not hold one attached .json record (it holds ${attached.length})`);
  }
  return new TextDecoder().decode(first[1]);
}

/** The issuer a record says it is from (read before anything is verified: a claim, not a fact). */
function statedIssuer(text: string): string | null {
  try {
    const payload = JSON.parse(new TextDecoder().decode(base64url.decode(JSON.parse(text).payload)));
    return typeof payload.issuer === 'string' ? payload.issuer : null;
  } catch {
    return null;
  }
}

/**
 * The key set to trust: the one --jwks names, else that of the service BASE_URL names, and then
 * only for a record that service issued. Never the one a record points to itself: a forger would
 * sign with their own keys and publish them.
 */
function trustedKeySource(values: Values, text: string): string {
  if (values.jwks) return values.jwks;
  const service = process.env.BASE_URL?.replace(/\/+$/, '');
  if (!service) {
    throw new UsageError(
      'give --jwks FILE|URL (a key set you trust), or set BASE_URL to the service whose records these are',
      commandUsage('evidence verify'),
    );
  }
  const issuer = statedIssuer(text);
  if (issuer !== service) {
    throw new Error(
      `the evidence record does not verify: issuer: it says it was issued by ${issuer ?? 'nobody'}, not by ${service} (BASE_URL)`,
    );
  }
  return `${service}/.well-known/jwks.json`;
}

async function keySet(source: string): Promise<JWK[]> {
  let text: string;
  if (/^https?:\/\//i.test(source)) {
    const response = await fetch(source, { signal: AbortSignal.timeout(10_000) }).catch((error: unknown) => {
      throw new Error(`the key set could not be fetched from ${source}: ${(error as Error).message}`);
    });
    if (!response.ok) throw new Error(`the key set at ${source} answered HTTP ${response.status}`);
    text = await response.text();
  } else {
    text = await readFile(source, 'utf8');
  }
  const parsed = JSON.parse(text) as { keys?: unknown } | unknown[];
  const keys = Array.isArray(parsed) ? parsed : parsed?.keys;
  if (!Array.isArray(keys)) throw new Error(`${source} is not a JWK set ({"keys": [...]})`);
  return keys as JWK[];
}

const OFFLINE_RUNS: Record<OfflineCommandName, (values: Values) => Promise<Record<string, unknown>>> = {
  'evidence verify': async (values) => {
    const file = values.file;
    if (!file) throw new UsageError('FILE is required', commandUsage('evidence verify'));
    const text = await recordText(file);
    const source = trustedKeySource(values, text);
    const check = await verifyEvidence(text, await keySet(source));
    if (!check.ok) throw new Error(`the evidence record does not verify: ${check.part}: ${check.reason}`);
    process.stdout.write(`The evidence record verifies (keys: ${source}).\n`);
    for (const line of evidenceSummary(check.record)) process.stdout.write(`${line}\n`);
    return {
      ok: true,
      case_id: check.record.case.id,
      status: check.record.case.status,
      provisional: check.record.provisional,
      kid: check.kid,
      issued_at: check.record.issued_at,
    };
  },
};

export function runOfflineCommand(
  name: OfflineCommandName,
  values: Values,
): Promise<Record<string, unknown>> {
  return OFFLINE_RUNS[name](values);
}
