// The bench agent on @temporalio/ai-sdk, written as its documentation and tests write it: the
// model is the Temporal provider, the tool runs as an activity, the loop is the AI SDK's.
import { generateText, isStepCount, tool } from 'ai';
import { z } from 'zod';
import { proxyActivities } from '@temporalio/workflow';
import { temporalProvider } from '@temporalio/ai-sdk/workflow';

const { fetchDoc } = proxyActivities({ startToCloseTimeout: '1 minute' });

/** Reads pages with fetch_doc until the model answers; `steps` bounds the model calls. */
export async function peerAgent(message, steps) {
  const result = await generateText({
    model: temporalProvider.languageModel('bench'),
    prompt: message,
    tools: {
      fetch_doc: tool({
        description: 'Returns a document page',
        inputSchema: z.object({ page: z.number().int() }),
        execute: async (input) => fetchDoc(input),
      }),
    },
    stopWhen: isStepCount(steps),
  });
  return result.text;
}
