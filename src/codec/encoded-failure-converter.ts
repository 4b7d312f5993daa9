import { DefaultFailureConverter } from '@temporalio/common';

/**
 * The failure converter of encrypting workers and clients (loaded by path, since workflow code
 * uses it too): failure messages and stack traces go into a payload, which the codec encrypts,
 * because tool and model errors can quote what the agent was told.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
