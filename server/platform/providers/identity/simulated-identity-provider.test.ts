import { describe, expect, it } from 'vitest';
import { createSimulatedIdentityProvider, SIMULATED_DEFAULT_NAME } from './simulated-identity-provider';

const png = (marker = '') =>
  new Uint8Array(Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from(marker)]));
const jpeg = () => new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2]);
const provider = createSimulatedIdentityProvider();

describe('simulated identity provider (documented test inputs)', () => {
  it('passes ordinary images and reads the name marker', async () => {
    expect(
      await provider.check({
        document: { fileName: 'id.jpg', bytes: jpeg() },
        selfie: { fileName: 's.png', bytes: png() },
      }),
    ).toEqual({
      outcome: 'verified',
      name: SIMULATED_DEFAULT_NAME,
      names: { given: 'Sam', family: 'Sample' },
      reportId: expect.stringMatching(/^simchk_[0-9a-f]{24}$/),
    });
    const named = await provider.check({
      document: { fileName: 'id.png', bytes: png('xx VOUCH-TEST:NAME=Ada Lovelace; yy') },
      selfie: { fileName: 's.png', bytes: png() },
    });
    expect(named).toEqual({
      outcome: 'verified',
      name: 'Ada Lovelace',
      names: { given: 'Ada', family: 'Lovelace' },
      reportId: expect.any(String),
    });
  });

  it('names each check by its pictures: the same two always get the same report id, others another', async () => {
    const check = (document: Uint8Array, selfie: Uint8Array) =>
      provider.check({
        document: { fileName: 'id.png', bytes: document },
        selfie: { fileName: 's.png', bytes: selfie },
      });
    const first = await check(png('a'), png('b'));
    const again = await check(png('a'), png('b'));
    const other = await check(png('a'), png('c'));
    expect(first.outcome === 'verified' && first.reportId).toMatch(/^simchk_/);
    expect(again).toEqual(first);
    expect(other.outcome === 'verified' && other.reportId).not.toBe(
      first.outcome === 'verified' && first.reportId,
    );
  });

  it.each([
    [
      'document file name',
      { fileName: 'Reject-me.png', bytes: png() },
      { fileName: 's.png', bytes: png() },
      'document',
      'document_unverified',
    ],
    [
      'document marker',
      { fileName: 'id.png', bytes: png('VOUCH-TEST:REJECT-DOCUMENT') },
      { fileName: 's.png', bytes: png() },
      'document',
      'document_unverified',
    ],
    [
      'document not an image',
      { fileName: 'id.png', bytes: new Uint8Array([1, 2, 3]) },
      { fileName: 's.png', bytes: png() },
      'document',
      'document_unreadable',
    ],
    [
      'selfie file name',
      { fileName: 'id.png', bytes: png() },
      { fileName: 'mismatch.png', bytes: png() },
      'face',
      'selfie_face_mismatch',
    ],
    [
      'selfie marker',
      { fileName: 'id.png', bytes: png() },
      { fileName: 's.png', bytes: png('VOUCH-TEST:REJECT-SELFIE') },
      'face',
      'selfie_face_mismatch',
    ],
    [
      'selfie not an image',
      { fileName: 'id.png', bytes: png() },
      { fileName: 's.png', bytes: new Uint8Array([0]) },
      'face',
      'selfie_unreadable',
    ],
  ] as const)('rejects by %s', async (_label, document, selfie, part, detail) => {
    expect(await provider.check({ document, selfie })).toEqual({
      outcome: 'rejected',
      part,
      detail,
      reportId: expect.stringMatching(/^simchk_/),
    });
  });
});
