/** The deterministic core: pure TypeScript, safe to import from workflow code. */
export * from './agent-loop';
export * from './agents';
export * from './approvals';
export * from './conversation';
export * from './duration';
export * from './immediate-return';
export * from './memory-window';
export * from './message-page';
export * from './run-input';
export * from './stop-conditions';
export * from './summaries';
export * from './tool-arguments';
export * from './tool-result-text';
export * from './types';
export * from './usage';
export * from './react-parser';
