// The bench agent on @temporalio/ai-sdk, written as its documentation and tests write it: the
// model is the Temporal provider, the tool runs as an activity, the loop is the AI SDK's.
import { generateText, isStepCount, tool } from 'ai';
import { z } from 'zod';
import { proxyActivities, sleep } from '@temporalio/workflow';
import { WorkflowStream } from '@temporalio/workflow-streams/workflow';
import { temporalProvider } from '@temporalio/ai-sdk/workflow';

const { fetchDoc, writeAnswer } = proxyActivities({ startToCloseTimeout: '1 minute' });

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

/**
 * The same streamed answer as the bench's durable-agents one, through @temporalio/workflow-streams
 * (the way Temporal's OpenAI Agents integration streams): an activity publishes each piece, with
 * batching; subscribers long-poll with updates.
 */
export async function streamedAnswer(words, delayMs) {
  new WorkflowStream();
  const text = await writeAnswer(words, delayMs);
  // Lets subscribers' last polls return before the workflow closes.
  await sleep(500);
  return text;
}
