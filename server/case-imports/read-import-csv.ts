import { CsvError, parse } from 'csv-parse/sync';
import type { VerificationMethod } from '@/db/schema';
import { METHOD_CREATE_FIELDS } from '@/server/verification/methods/creation';

/**
 * How much one file may hold: a hiring wave fits, and the upload stays under the body limit. A
 * custom answer costs the check nothing much: it is sealed, and hashed by the worker as its row
 * is created (server/case-imports/sealed-answers.ts).
 */
export const IMPORT_LIMITS = { rows: 10_000, bytes: 900_000 } as const;

/**
 * A data row of the file, by its line (the header is line 1, as a spreadsheet numbers it): the
 * create body it stands for (not yet checked), or what is wrong with its shape.
 */
export type ImportCsvRow =
  | { line: number; body: Record<string, unknown> }
  | { line: number; problem: string };

export type ImportCsv = { rows: ImportCsvRow[] } | { fileError: string };

/** The create body's fields a column may fill, under their API names. */
const FIELDS = [
  'subject_email',
  'subject_name',
  'locale',
  'verification_methods',
  'notes',
  'offer_passkey',
  ...Object.keys(METHOD_CREATE_FIELDS),
];

/** The yes/no columns, and how a spreadsheet says yes and no in them. */
const YES_NO_FIELDS = new Set(['offer_passkey']);
const YES = new Set(['yes', 'y', 'true', '1']);
const NO = new Set(['no', 'n', 'false', '0']);

/** A yes/no cell as the body's boolean; anything else stays as written, for the body's check to name. */
function yesNo(cell: string): boolean | string {
  const said = cell.trim().toLowerCase();
  return YES.has(said) ? true : NO.has(said) ? false : cell;
}

/** What spreadsheets call the columns people name most (an HR system's export says "Email"). */
const ALIASES: Record<string, string> = {
  email: 'subject_email',
  e_mail: 'subject_email',
  email_address: 'subject_email',
  name: 'subject_name',
  full_name: 'subject_name',
  methods: 'verification_methods',
  note: 'notes',
  language: 'locale',
};

function fieldOf(header: string): string {
  const key = header
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  return ALIASES[key] ?? key;
}

/**
 * A methods cell ("email sms", "email, government_id") as the create body's object; an empty
 * cell takes the methods chosen for the whole file. A misspelt method stays in, so the create
 * body's own check names it.
 */
function methodsOf(cell: string, defaults: readonly VerificationMethod[]): Record<string, boolean> {
  const named = cell.split(/[\s,;|+]+/).filter(Boolean);
  const methods = named.length > 0 ? named.map((name) => name.toLowerCase()) : defaults;
  return Object.fromEntries(methods.map((method) => [method, true]));
}

/**
 * Reads an import file: a header row naming the columns (the create body's fields, with the
 * usual aliases: `email`, `name`, `methods`), then one case per row. Returns each non-blank row
 * as the create body it stands for, with its line, or what makes the whole file unreadable (an
 * unknown or repeated column, no e-mail column, broken quoting, too many rows). Rows are checked
 * by the caller, against the same schema as `POST /v1/cases/`.
 */
export function readImportCsv(text: string, defaultMethods: readonly VerificationMethod[]): ImportCsv {
  let records: Array<{ record: string[]; info: { lines: number } }>;
  try {
    records = parse(text, {
      bom: true,
      info: true,
      trim: true,
      skip_empty_lines: true,
      relax_column_count: true,
      record_delimiter: ['\r\n', '\n', '\r'],
    }) as unknown as typeof records; // `info: true` gives each record with its position
  } catch (error) {
    if (error instanceof CsvError) {
      return { fileError: `The file is not valid CSV near line ${error.lines ?? '?'}: ${error.message}` };
    }
    throw error;
  }
  const [header, ...data] = records;
  if (!header) return { fileError: 'The file is empty: put a header row first, such as "email,name".' };
  const columns = header.record.map(fieldOf);
  for (const [index, column] of columns.entries()) {
    if (!column) return { fileError: `Column ${index + 1} of the header row has no name.` };
    if (!FIELDS.includes(column)) {
      return {
        fileError: `Unknown column "${header.record[index]}" in the header row. The columns are: ${FIELDS.join(', ')} (also email, name, language and methods).`,
      };
    }
    if (columns.indexOf(column) !== index) {
      return { fileError: `The column ${column} appears twice in the header row.` };
    }
  }
  if (!columns.includes('subject_email')) {
    return { fileError: 'The header row has no e-mail column: name one "email" or "subject_email".' };
  }
  const rows = data.filter(({ record }) => record.some((cell) => cell !== ''));
  if (rows.length === 0) return { fileError: 'The file has a header row but no rows of cases.' };
  if (rows.length > IMPORT_LIMITS.rows) {
    return {
      fileError: `The file has ${rows.length.toLocaleString('en')} rows; one import takes at most ${IMPORT_LIMITS.rows.toLocaleString('en')}. Split it into several files.`,
    };
  }
  return {
    rows: rows.map(({ record, info }): ImportCsvRow => {
      if (record.slice(columns.length).some((cell) => cell !== '')) {
        return {
          line: info.lines,
          problem: `the row has ${record.length} cells where the header names ${columns.length} columns`,
        };
      }
      const body: Record<string, unknown> = {};
      for (const [index, column] of columns.entries()) {
        const cell = record[index] ?? '';
        if (column === 'verification_methods') continue;
        // An empty cell is a field left out, except the address, which every row needs.
        if (cell !== '' || column === 'subject_email')
          body[column] = YES_NO_FIELDS.has(column) ? yesNo(cell) : cell;
      }
      const methodsCell = columns.includes('verification_methods')
        ? (record[columns.indexOf('verification_methods')] ?? '')
        : '';
      body.verification_methods = methodsOf(methodsCell, defaultMethods);
      return { line: info.lines, body };
    }),
  };
}
