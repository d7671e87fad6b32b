import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { base64url, type JWK } from 'jose';
import { readPdf } from '@/server/evidence/pdf-attachment';
import { type EvidenceRecord, evidencePdfNames } from '@/server/evidence/record-format';
import { evidenceSummary, type RevokedKeyNotice, verifyEvidence } from '@/server/evidence/verify-evidence';
import { commandUsage, type OfflineCommandName, UsageError, type Values } from './usage';

/** The operator commands that work on files alone: no database is opened. */

/** What an evidence PDF says of the case it describes, outside the record attached to it. */
interface PdfClaims {
  attachment: string;
  title: string | null;
  subject: string | null;
}

/**
 * A file named on the command line, where the person means it: `npm run` starts a script in the
 * package's folder, whatever folder it was run from, and says which in INIT_CWD; a path given
 * there (the evidence PDF's printed command names the PDF alone) is relative to that folder.
 */
function typedPath(file: string): string {
  const invokedFrom = process.env.npm_lifecycle_event === 'cli' ? process.env.INIT_CWD : undefined;
  return path.resolve(invokedFrom || process.cwd(), file);
}

/** The record in FILE: the signed JSON itself, or the one attached to an evidence PDF (with what the PDF claims). */
async function recordText(file: string): Promise<{ text: string; pdf: PdfClaims | null }> {
  const bytes = await readFile(typedPath(file));
  if (bytes.subarray(0, 5).toString('latin1') !== '%PDF-') return { text: bytes.toString('utf8'), pdf: null };
  const pdf = await readPdf(bytes);
  const attached = [...pdf.attachments.entries()].filter(([name]) => name.endsWith('.json'));
  const [first] = attached;
  if (!first || attached.length > 1) {
    throw new Error(`${file}: the PDF does not hold one attached .json record (it holds ${attached.length})`);
  }
  return {
    text: new TextDecoder().decode(first[1]),
    pdf: { attachment: first[0], title: pdf.title, subject: pdf.subject },
  };
}

/**
 * A PDF's own description of its case (the attachment's name, its title and subject) held against
 * the record verified, so that an evidence PDF of one case carrying another case's genuine record
 * is refused. It is a consistency check, no proof: all three can be edited, and so can the pages,
 * which are never verified (they are a drawing); the output says so.
 */
function pdfMismatch(pdf: PdfClaims, record: Pick<EvidenceRecord, 'case'>): string | null {
  const expected = evidencePdfNames(record);
  if (pdf.attachment !== expected.attachment) {
    return `the attached record is named ${pdf.attachment}, but it is the record of case ${record.case.public_id} (${expected.attachment})`;
  }
  if (pdf.title !== expected.title || pdf.subject !== expected.subject) {
    return `the PDF describes itself as "${pdf.title ?? ''}" / "${pdf.subject ?? ''}", but its attached record is of case ${record.case.id} (${record.case.public_id})`;
  }
  return null;
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
  const issuer = statedIssuer(text);
  if (!service) {
    // The record's issuer is named as a suggestion only: the person decides whether it is the
    // service they expect.
    throw new UsageError(
      `give --jwks FILE|URL (a key set you trust), or set BASE_URL to the service whose records these are${
        issuer
          ? `. The record says it was issued by ${issuer}: if that is the service you expect, add --jwks ${issuer}/.well-known/jwks.json`
          : ''
      }`,
      commandUsage('evidence verify'),
    );
  }
  if (issuer !== service) {
    throw new Error(
      `the evidence record does not verify: issuer: it says it was issued by ${issuer ?? 'nobody'}, not by ${service} (BASE_URL)`,
    );
  }
  return `${service}/.well-known/jwks.json`;
}

async function keySet(source: string): Promise<{ keys: JWK[]; revoked: RevokedKeyNotice[] }> {
  let text: string;
  if (/^https?:\/\//i.test(source)) {
    const response = await fetch(source, { signal: AbortSignal.timeout(10_000) }).catch((error: unknown) => {
      throw new Error(`the key set could not be fetched from ${source}: ${(error as Error).message}`);
    });
    if (!response.ok) throw new Error(`the key set at ${source} answered HTTP ${response.status}`);
    text = await response.text();
  } else {
    text = await readFile(typedPath(source), 'utf8');
  }
  const parsed = JSON.parse(text) as { keys?: unknown; revoked?: unknown } | unknown[];
  const keys = Array.isArray(parsed) ? parsed : parsed?.keys;
  if (!Array.isArray(keys)) throw new Error(`${source} is not a JWK set ({"keys": [...]})`);
  const revoked = Array.isArray(parsed) || !Array.isArray(parsed?.revoked) ? [] : parsed.revoked;
  return {
    keys: keys as JWK[],
    revoked: revoked.filter(
      (key): key is RevokedKeyNotice =>
        typeof key === 'object' && key !== null && typeof (key as RevokedKeyNotice).kid === 'string',
    ),
  };
}

const OFFLINE_RUNS: Record<OfflineCommandName, (values: Values) => Promise<Record<string, unknown>>> = {
  'evidence verify': async (values) => {
    const file = values.file;
    if (!file) throw new UsageError('FILE is required', commandUsage('evidence verify'));
    const { text, pdf } = await recordText(file);
    const source = trustedKeySource(values, text);
    const set = await keySet(source);
    const check = await verifyEvidence(text, set.keys, set.revoked);
    if (!check.ok) throw new Error(`the evidence record does not verify: ${check.part}: ${check.reason}`);
    const mismatch = pdf ? pdfMismatch(pdf, check.record) : null;
    if (mismatch) throw new Error(`the evidence PDF does not hold its own case's record: ${mismatch}`);
    process.stdout.write(`The evidence record verifies (keys: ${source}).\n`);
    if (pdf) {
      process.stdout.write(
        `What was verified is the record attached to the PDF (${pdf.attachment}), not its printed pages: they are a rendering, which anyone can edit. Check that they show case ${check.record.case.id} (${check.record.case.public_id}); trust only the lines below.\n`,
      );
    }
    for (const line of evidenceSummary(check.record)) process.stdout.write(`${line}\n`);
    return {
      ok: true,
      // A PDF's pages are a drawing anyone can edit: only its attached record was verified.
      verified: pdf ? 'the attached record, not the printed pages' : 'the record',
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
