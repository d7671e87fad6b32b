import { describe, expect, it } from 'vitest';
import { IMPORT_LIMITS, readImportCsv } from './read-import-csv';

describe('readImportCsv', () => {
  it('reads rows under the API field names or their aliases, with each row’s line', () => {
    const file = readImportCsv(
      '\uFEFFE-mail, Full Name ,Methods,Notes\r\nana@corp.test,"Ana, Lopez",email sms,\r\n\r\nbo@corp.test,Bo,,badge 7\n',
      ['email'],
    );
    expect(file).toEqual({
      rows: [
        {
          line: 2,
          body: {
            subject_email: 'ana@corp.test',
            subject_name: 'Ana, Lopez',
            verification_methods: { email: true, sms: true },
          },
        },
        // An empty methods cell takes the methods chosen for the file; empty cells are left out.
        {
          line: 4,
          body: {
            subject_email: 'bo@corp.test',
            subject_name: 'Bo',
            notes: 'badge 7',
            verification_methods: { email: true },
          },
        },
      ],
    });
  });

  it('keeps the address column even when empty, and a misspelt method, for the create body’s check to name', () => {
    const file = readImportCsv('email,methods\n,emial\n', []);
    expect(file).toEqual({
      rows: [{ line: 2, body: { subject_email: '', verification_methods: { emial: true } } }],
    });
  });

  it('reads a yes/no column as the body’s boolean, and leaves anything else for the body’s check', () => {
    const file = readImportCsv('email,offer_passkey\na@corp.test,Yes\nb@corp.test,no\nc@corp.test,maybe\n', [
      'email',
    ]);
    expect(file).toEqual({
      rows: [
        {
          line: 2,
          body: { subject_email: 'a@corp.test', offer_passkey: true, verification_methods: { email: true } },
        },
        {
          line: 3,
          body: { subject_email: 'b@corp.test', offer_passkey: false, verification_methods: { email: true } },
        },
        {
          line: 4,
          body: {
            subject_email: 'c@corp.test',
            offer_passkey: 'maybe',
            verification_methods: { email: true },
          },
        },
      ],
    });
  });

  it('names a row with more cells than the header has columns', () => {
    const file = readImportCsv('email,name\na@corp.test,A,extra\nb@corp.test,B,\n', ['email']);
    expect(file).toEqual({
      rows: [
        { line: 2, problem: 'the row has 3 cells where the header names 2 columns' },
        {
          line: 3,
          body: { subject_email: 'b@corp.test', subject_name: 'B', verification_methods: { email: true } },
        },
      ],
    });
  });

  it.each([
    ['', /empty/],
    ['email,name\n', /no rows/],
    ['name,department\nA,IT\n', /Unknown column "department"/],
    ['name\nA\n', /no e-mail column/],
    ['email,Email\na@b.test,c@d.test\n', /subject_email appears twice/],
    ['email,\na@b.test,\n', /Column 2 of the header row has no name/],
    ['email,name\n"a@b.test,A\n', /not valid CSV near line/],
  ])('refuses the whole file %j', (text, reason) => {
    const file = readImportCsv(text, ['email']);
    expect('fileError' in file && file.fileError).toMatch(reason);
  });

  it(`takes at most ${IMPORT_LIMITS.rows} rows`, () => {
    const rows = (n: number) =>
      `email\n${Array.from({ length: n }, (_, i) => `p${i}@corp.test`).join('\n')}\n`;
    expect('rows' in readImportCsv(rows(IMPORT_LIMITS.rows), ['email'])).toBe(true);
    const tooMany = readImportCsv(rows(IMPORT_LIMITS.rows + 1), ['email']);
    expect('fileError' in tooMany && tooMany.fileError).toMatch(/at most 10,000/);
  });
});
