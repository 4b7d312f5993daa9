/** The deterministic core: pure TypeScript, safe to import from workflow code. */
export * from './agent-loop';
export * from './duration';
export * from './immediate-return';
export * from './message-page';
export * from './run-input';
export * from './stop-conditions';
export * from './summaries';
export * from './tool-arguments';
export * from './tool-result-text';
export * from './types';
