import { describe, expect, it } from 'vitest';
import { flowIdOf, REQUEST_URI_PREFIX } from './flows';

describe('a pushed request’s request_uri', () => {
  const id = 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6';

  it('names its flow by the 32 letters and digits after the RFC 9126 prefix', () => {
    expect(REQUEST_URI_PREFIX).toBe('urn:ietf:params:oauth:request_uri:');
    expect(flowIdOf(`${REQUEST_URI_PREFIX}${id}`)).toBe(id);
  });

  it('names none for another prefix, another length or another alphabet', () => {
    // The same length behind another scheme's prefix is not ours.
    expect(flowIdOf(`urn:IETF:params:oauth:request_uri:${id}`)).toBeNull();
    expect(flowIdOf(id)).toBeNull();
    expect(flowIdOf(`${REQUEST_URI_PREFIX}${id.slice(1)}`)).toBeNull();
    expect(flowIdOf(`${REQUEST_URI_PREFIX}${id}x`)).toBeNull();
    expect(flowIdOf(`${REQUEST_URI_PREFIX}${id.slice(1)}-`)).toBeNull();
    expect(flowIdOf(`${REQUEST_URI_PREFIX}${id.slice(1)}\n`)).toBeNull();
    expect(flowIdOf(`x${REQUEST_URI_PREFIX}${id}`)).toBeNull();
  });
});
