import { ClientError } from '../client/client-error';
import { ImageInputError, readImageArgument, type ImageInput } from '../storage/images';

/**
 * The `--image` arguments as images: URLs as they are, files read. Read before anything starts,
 * so a misspelt path fails the command at once (`invalid`), not the run.
 */
export async function readImageArguments(args: readonly string[] | undefined): Promise<ImageInput[] | undefined> {
  if (!args?.length) return undefined;
  try {
    return await Promise.all(args.map(readImageArgument));
  } catch (err) {
    if (err instanceof ImageInputError) throw new ClientError('invalid', err.message);
    throw err;
  }
}
