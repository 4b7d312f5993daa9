import { signatureProblem, signBody } from '../../src/http/webhook-signature';

describe('webhook signatures', () => {
  const body = '{"amount":42}';

  it('accepts the HMAC-SHA256 of the raw body under the secret', () => {
    // GitHub's documented example of its X-Hub-Signature-256 (the same scheme).
    expect(signBody("It's a Secret to Everybody", 'Hello, World!')).toBe(
      'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
    );
    const expected = signBody('s3cret', body);
    expect(signatureProblem('s3cret', body, expected)).toBeUndefined();
    expect(
      signatureProblem('s3cret', Buffer.from(body), expected.toUpperCase().replace('SHA256', 'sha256')),
    ).toBeUndefined();
  });

  it('refuses a missing, malformed or wrong signature, saying which', () => {
    expect(signatureProblem('s3cret', body, undefined)).toMatch(/needs the x-signature-256 header/);
    expect(signatureProblem('s3cret', body, 'md5=abc')).toMatch(/must be sha256=<64 hex digits>/);
    expect(signatureProblem('s3cret', body, signBody('other', body))).toMatch(/does not match the body/);
    expect(signatureProblem('s3cret', `${body} `, signBody('s3cret', body))).toMatch(/does not match/);
  });
});
