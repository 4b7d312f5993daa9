/**
 * Command-line client of this repository (the published package offers the same as the
 * `durable-agents` bin). `node --import tsx client.ts --help` lists the commands.
 */
import { runMain } from './src/cli/main';

runMain();
