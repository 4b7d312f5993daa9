/**
 * The deterministic core: pure TypeScript, safe to import from workflow code. Grouped by what it
 * decides; every group's modules are re-exported here, the one door other layers use.
 */

// Messages: what a conversation is made of, and what the model replies.
export * from './messages/chat-message';
export * from './messages/model-reply';
export * from './messages/usage';
export * from './messages/images';

// A run: its options and input, its state, the loop's next step, its limits and result.
export * from './run/run-options';
export * from './run/run-input';
export * from './run/run-state';
export * from './run/agent-loop';
export * from './run/model-call-input';
export * from './run/agents';
export * from './run/agent-version';
export * from './run/limits';
export * from './run/model-fallback';
export * from './run/react-parser';
export * from './run/run-result';
export * from './run/run-carry';

// Tool calls: the tools a run has, their arguments and results, approvals, handoffs.
export * from './tool-calls/tool-info';
export * from './tool-calls/agent-tools';
export * from './tool-calls/tool-arguments';
export * from './tool-calls/tool-results';
export * from './tool-calls/approvals';
export * from './tool-calls/tool-questions';
export * from './tool-calls/handoffs';

// The fleet: tenants (who a run works for, what its callers may see), their budgets, and the rate governor of each model.
export * from './fleet/tenants';
export * from './fleet/tenant-ledger';
export * from './fleet/rate-governor';

// The context window: what the model sees of a long run, compaction, summaries and the message window.
export * from './context/context-windows';
export * from './context/compaction';
export * from './context/run-context';
export * from './context/summaries';
export * from './context/message-window';

// Facts: memory across conversations (whose, what a fact is, the memory tools, extraction, agents' settings).
export * from './facts/memory-scope';
export * from './facts/fact';
export * from './facts/memory-tools';
export * from './facts/fact-extraction';
export * from './facts/memory-options';
export * from './facts/forgetting';
export * from './facts/fingerprints';

// Conversations: many turns of one agent, across continue-as-new.
export * from './conversation/conversation-state';
export * from './conversation/conversation';
export * from './conversation/busy';
export * from './conversation/message-ids';
export * from './conversation/branches';
export * from './conversation/fork-conversation';
export * from './conversation/conversation-status';

// Events: what subscribers see, and what the search attributes show.
export * from './events/agent-events';
export * from './events/event-log';
export * from './events/live-text-merge';
export * from './events/search-attributes';

// Guardrails: checks of the input, the answer and tool calls.
export * from './guardrails/guardrails';

// Time: durations, durable waits, schedules.
export * from './time/duration';
export * from './time/durable-waits';
export * from './time/schedules';
