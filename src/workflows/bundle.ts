/** Workflow entry point for the worker's bundler (`workflowsPath`). Workflow-safe code only. */
export { agentWorkflow } from './agent-workflow';
export { conversationWorkflow } from './conversation-workflow';
export { listAgentsWorkflow } from './list-agents-workflow';
export { scheduledTurnWorkflow } from './scheduled-turn-workflow';
export { a2aTaskWorkflow } from './a2a-task-workflow';
