import { createHash, createSign, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';

/**
 * A platform authenticator in software, answering WebAuthn's ceremonies as a browser hands a
 * page the answer (the JSON `@simplewebauthn/browser` posts): an ES256 key pair per credential,
 * authenticator data built byte by byte (WebAuthn Level 3, §6.1), attestation `none`, and a
 * signature counter. Each answer can be bent the ways an attacker or a broken client would: another
 * origin or relying party, no user verification, a counter sent backwards.
 */
export interface AnswerOptions {
  origin?: string;
  rpId?: string;
  userVerified?: boolean;
  /** The counter to report (default: one more than the last). */
  counter?: number;
}

const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;
const FLAG_ATTESTED_DATA = 0x40;

const sha256 = (data: Uint8Array | string) => new Uint8Array(createHash('sha256').update(data).digest());
const b64url = (bytes: Uint8Array) => isoBase64URL.fromBuffer(new Uint8Array(bytes));

function uint32(value: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value);
  return bytes;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string): string {
  return JSON.stringify({ type, challenge, origin, crossOrigin: false });
}

export class SoftwareAuthenticator {
  readonly credentialId = b64url(new Uint8Array(randomBytes(16)));
  private readonly privateKey: KeyObject;
  private readonly publicJwk: { x: string; y: string };
  private counter = 0;

  constructor(
    private readonly origin: string,
    private readonly rpId = new URL(origin).hostname,
  ) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    this.publicJwk = publicKey.export({ format: 'jwk' }) as { x: string; y: string };
  }

  private authenticatorData(rpId: string, flags: number, counter: number, attested?: Uint8Array): Uint8Array {
    return concat(sha256(rpId), new Uint8Array([flags]), uint32(counter), attested ?? new Uint8Array());
  }

  /** The answer to `navigator.credentials.create()` with these options' challenge. */
  register(challenge: string, options: AnswerOptions = {}): RegistrationResponseJSON {
    const id = isoBase64URL.toBuffer(this.credentialId);
    const coseKey = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, isoBase64URL.toBuffer(this.publicJwk.x)],
        [-3, isoBase64URL.toBuffer(this.publicJwk.y)],
      ]),
    );
    const attested = concat(
      new Uint8Array(16),
      new Uint8Array([id.length >> 8, id.length & 0xff]),
      id,
      coseKey,
    );
    const flags =
      FLAG_USER_PRESENT | FLAG_ATTESTED_DATA | (options.userVerified === false ? 0 : FLAG_USER_VERIFIED);
    const authData = this.authenticatorData(options.rpId ?? this.rpId, flags, this.counter, attested);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Uint8Array | Map<string, string>>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, string>()],
        ['authData', authData],
      ]),
    );
    const json = clientData('webauthn.create', challenge, options.origin ?? this.origin);
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(new TextEncoder().encode(json)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }

  /** The answer to `navigator.credentials.get()` with these options' challenge. */
  authenticate(challenge: string, options: AnswerOptions = {}): AuthenticationResponseJSON {
    this.counter = options.counter ?? this.counter + 1;
    const flags = FLAG_USER_PRESENT | (options.userVerified === false ? 0 : FLAG_USER_VERIFIED);
    const authData = this.authenticatorData(options.rpId ?? this.rpId, flags, this.counter);
    const json = new TextEncoder().encode(
      clientData('webauthn.get', challenge, options.origin ?? this.origin),
    );
    const signature = createSign('sha256')
      .update(concat(authData, sha256(json)))
      .sign(this.privateKey);
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(json),
        authenticatorData: b64url(authData),
        signature: b64url(new Uint8Array(signature)),
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }
}
