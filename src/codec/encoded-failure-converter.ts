import { DefaultFailureConverter, type PayloadConverter, type ProtoFailure } from '@temporalio/common';
import { isEncryptionMismatch } from './encryption-mismatch';

/**
 * The failure converter of encrypting workers and clients (loaded by path, since workflow code
 * uses it too): failure messages and stack traces go into a payload, which the codec encrypts,
 * because tool and model errors can quote what the agent was told. Failures about the keys
 * themselves (a payload that is not encrypted, or is under a key this process lacks) stay as they
 * are: they quote nothing, and a worker with the wrong keys must not write a failure that only it
 * can read into a history its peers share.
 */
class EncryptingFailureConverter extends DefaultFailureConverter {
  private readonly plain = new DefaultFailureConverter({ encodeCommonAttributes: false });

  constructor() {
    super({ encodeCommonAttributes: true });
  }

  override errorToFailure(err: unknown, payloadConverter: PayloadConverter): ProtoFailure {
    return isEncryptionMismatch(err)
      ? this.plain.errorToFailure(err, payloadConverter)
      : super.errorToFailure(err, payloadConverter);
  }
}

/** The converter, as `failureConverterPath` modules export it. */
export const failureConverter = new EncryptingFailureConverter();
