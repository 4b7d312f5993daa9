import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyModelReply, applyToolOutcomes, startRun } from '../../src/core/run/agent-loop';
import { readToolOutput, toolResultView, type ToolExecution } from '../../src/core/messages/tool-results';
import { validateAgentInput, maxToolResultTokens, runLimits } from '../../src/core/run/run-input';
import type { ToolInfo } from '../../src/core/messages/tool-info';
import { FileStorageDriver } from '../../src/storage/file-storage-driver';
import { payloadStorageFromEnv } from '../../src/storage/payload-storage';
import { removeStoredPayloads, storedPayloadRefs } from '../../src/storage/payload-removal';
import { ExternalStorage } from '@temporalio/common';
import { encodeReferencePayload } from '@temporalio/common/lib/internal-non-workflow';
import { ToolRegistry } from '../../src/tools/registry';
import { defineTool } from '../../src/tools/define-tool';
import { z } from 'zod';

/** Tool outputs of any size: the bounded view, paging, and where large payloads are stored. */

const TEXT = Array.from({ length: 2000 }, (_, i) => `row ${i}\n`).join(''); // 16,890 characters

describe('the view of a long output', () => {
  it('is the whole output when it fits', () => {
    expect(toolResultView('short', 100, 'c1', true)).toBe('short');
  });

  it('is its head and tail around a note with the full size and how to read on', () => {
    const view = toolResultView(TEXT, 1000, 'c1', true);
    expect(view.length).toBeLessThan(4000 + 400);
    expect(view.startsWith(TEXT.slice(0, 2800))).toBe(true);
    expect(view.endsWith(TEXT.slice(-800))).toBe(true);
    expect(view).toContain(
      `[... 13,290 characters left out: the whole output is 16,890 characters (16 KB); shown are the first 2,800 and the last 800. Call read_tool_output with {"call_id": "c1", "offset": 2800, "length": 4000} to read what is left out.]`,
    );
    expect(toolResultView(TEXT, 1000, 'c1', false)).not.toContain('read_tool_output');
  });
});

describe('read_tool_output', () => {
  const executions: ToolExecution[] = [
    { id: 'c1', name: 'dump', arguments: {}, result: TEXT, error: false, immediate: false },
  ];

  it('reads a page, says where the next one starts, and never more than a result may show', () => {
    const page = readToolOutput(executions, { call_id: 'c1', offset: 2800, length: 100 }, 1000);
    expect(page.error).toBe(false);
    expect(page.result).toBe(
      `[characters 2800 to 2900 of 16890 of the output of c1. 13,990 characters follow; the next part starts at offset 2900.]\n${TEXT.slice(2800, 2900)}`,
    );
    const big = readToolOutput(executions, { call_id: 'c1', offset: 0, length: 1_000_000 }, 1000);
    expect(big.result.length).toBeLessThanOrEqual(4000);
    expect(readToolOutput(executions, { call_id: 'c1', offset: 16_800, length: 500 }, 1000).result).toMatch(
      /This is the end\./,
    );
  });

  it('answers mistakes as errors the model can fix', () => {
    expect(readToolOutput(executions, { call_id: 'c9', offset: 0, length: 10 }, 1000)).toMatchObject({
      error: true,
      result: expect.stringMatching(/no output of call "c9" in this run/),
    });
    expect(readToolOutput(executions, { call_id: 'c1', offset: 99_999, length: 10 }, 1000).result).toMatch(
      /past the end: the output is 16890 characters/,
    );
    expect(readToolOutput(executions, { call_id: 'c1' }, 1000).result).toMatch(/give "call_id"/);
  });

  it('is answered by the core from the run itself, and the model sees a view of a long result', () => {
    const tools: ToolInfo[] = [
      { name: 'dump', immediate: false, timeoutMs: 1000, retry: { maximumAttempts: 1, initialIntervalMs: 1 } },
      {
        ...{ name: 'read_tool_output', immediate: false, timeoutMs: 1000 },
        retry: { maximumAttempts: 1, initialIntervalMs: 1 },
        builtin: 'read_tool_output',
      },
    ];
    const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
    const step = { type: 'call_model' as const, iteration: 1, toolNames: [], final: false };
    let state = startRun({ message: 'dump it', maxToolResultTokens: 1000 }, tools);
    state = applyModelReply(state, step, {
      content: null,
      toolCalls: [{ id: 'c1', type: 'function', function: { name: 'dump', arguments: '{}' } }],
      finishReason: 'tool_calls',
      usage,
    });
    state = applyToolOutcomes(state, [{ result: TEXT, error: false }]);
    expect(state.toolExecutions[0].result).toBe(TEXT);
    expect(String(state.messages.at(-1)!.content)).toContain('Call read_tool_output with');
    state = applyModelReply(
      state,
      { ...step, iteration: 2 },
      {
        content: null,
        toolCalls: [
          {
            id: 'c2',
            type: 'function',
            function: { name: 'read_tool_output', arguments: '{"call_id":"c1","offset":5,"length":3}' },
          },
        ],
        finishReason: 'tool_calls',
        usage,
      },
    );
    expect(state.phase).toMatchObject({ kind: 'tools', calls: [{ resolved: { error: false } }] });
    expect(validateAgentInput({ message: 'x', maxToolResultTokens: 10 })).toEqual([
      expect.stringMatching(/"maxToolResultTokens" must be a whole number >= 100/),
    ]);
  });

  it('is a built-in of every registry: offered when named, never by default, and its name is taken', () => {
    const registry = new ToolRegistry();
    expect(registry.names()).toEqual([]);
    expect(registry.info('read_tool_output')).toMatchObject({ builtin: 'read_tool_output' });
    const clash = defineTool({
      name: 'read_tool_output',
      description: 'x',
      parameters: z.object({}),
      execute: () => 1,
    });
    expect(() => registry.register(clash)).toThrow(/the name of a built-in tool/);
  });
});

describe('the payload store', () => {
  it('keeps payloads as files by their hash, and names the fix for one stored elsewhere', async () => {
    const driver = new FileStorageDriver(mkdtempSync(join(tmpdir(), 'payloads-')));
    const payload = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"big"') };
    const [claim] = await driver.store({}, [payload]);
    expect(claim.claimData.hash).toMatch(/^[0-9a-f]{64}$/);
    const [back] = await driver.retrieve({}, [claim]);
    expect(Buffer.from(back.data!).toString()).toBe('"big"');
    const missing = { claimData: { hash: '0'.repeat(64) } };
    await expect(driver.retrieve({}, [missing])).rejects.toThrow(/stored on another machine.*AGENT_PAYLOAD_STORE=s3:/);
    const dir = join(driver.dir, claim.claimData.hash.slice(0, 2));
    writeFileSync(join(dir, readdirSync(dir)[0]), 'changed');
    await expect(driver.retrieve({}, [claim])).rejects.toThrow(/damaged/);
  });

  it('finds the references a raw history holds and removes their payloads through the driver that stored them', async () => {
    const driver = new FileStorageDriver(mkdtempSync(join(tmpdir(), 'payloads-')));
    const storage = new ExternalStorage({ drivers: [driver] });
    const payload = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"big"') };
    const [claim] = await driver.store({}, [payload]);
    const ref = encodeReferencePayload({ driverName: driver.name, claim, sizeBytes: 5 });
    // As a history event holds it, among payloads that are not references.
    const events = [
      { eventId: 1, workflowExecutionStartedEventAttributes: { input: { payloads: [payload, ref] } } },
      { eventId: 2, activityTaskCompletedEventAttributes: { result: { payloads: [payload] } } },
    ];
    const refs = storedPayloadRefs(events);
    expect(refs).toEqual([{ driverName: driver.name, claimData: { hash: claim.claimData.hash } }]);
    expect(await removeStoredPayloads(storage, refs)).toEqual({ removed: 1, kept: 0 });
    await expect(driver.retrieve({}, [claim])).rejects.toThrow(/is not in/);
    // Removed already, or a driver this worker does not have: nothing removed, nothing thrown.
    expect(await removeStoredPayloads(storage, refs)).toEqual({ removed: 0, kept: 1 });
    expect(await removeStoredPayloads(storage, [{ driverName: 'elsewhere', claimData: {} }])).toEqual({
      removed: 0,
      kept: 1,
    });
  });

  it('is read from AGENT_PAYLOAD_STORE and AGENT_PAYLOAD_THRESHOLD, with clear errors', () => {
    const files = payloadStorageFromEnv({ AGENT_PAYLOAD_STORE: '/tmp/payloads', AGENT_PAYLOAD_THRESHOLD: '100000' })!;
    expect(files).toMatchObject({ where: 'files in /tmp/payloads', shared: false });
    expect(files.storage.payloadSizeThreshold).toBe(100_000);
    expect(payloadStorageFromEnv({})!.where).toBe(`files in ${join(process.cwd(), '.temporal', 'payloads')}`);
    expect(payloadStorageFromEnv({ AGENT_PAYLOAD_STORE: 'off' })).toBeUndefined();
    expect(payloadStorageFromEnv({ AGENT_PAYLOAD_STORE: 's3://bucket/prefix' })).toMatchObject({ shared: true });
    expect(() => payloadStorageFromEnv({ AGENT_PAYLOAD_STORE: 'gs://bucket' })).toThrow(/not a store/);
    expect(() => payloadStorageFromEnv({ AGENT_PAYLOAD_THRESHOLD: '3000000' })).toThrow(/under Temporal's 2 MB/);
  });
});

it('shows a tool output in at most a quarter of maxPromptTokens unless the run says otherwise', async () => {
  expect(maxToolResultTokens(runLimits({}))).toBe(8000);
  expect(maxToolResultTokens(runLimits({ maxPromptTokens: 8000 }))).toBe(2000);
  expect(maxToolResultTokens(runLimits({ maxPromptTokens: 8000, maxToolResultTokens: 5000 }))).toBe(5000);
});

describe('a tool outcome', () => {
  it('says when its text is the JSON of the value the tool returned, and not when it is not', async () => {
    const { toolOutcome, toolOutcomeOf } = await import('../../src/tools/tool-call');
    const { toolOutput } = await import('../../src/tools/tool-output');
    expect(toolOutcome({ city: 'Paris' })).toEqual({
      result: '{"city":"Paris"}',
      value: { city: 'Paris' },
      json: true,
      error: false,
    });
    expect(toolOutcome(42)).toMatchObject({ result: '42', json: true });
    expect(toolOutcome('{"a":1}')).toEqual({ result: '{"a":1}', error: false });
    expect(toolOutcome(undefined)).toEqual({ result: 'Success', error: false });
    // A text for the model with data beside it: the text is not the value's JSON.
    expect(await toolOutcomeOf(toolOutput({ text: 'the map', value: { zoom: 3 } }))).toEqual({
      result: 'the map',
      value: { zoom: 3 },
      error: false,
    });
  });
});
