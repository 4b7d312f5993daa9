export {
  defineTool,
  defineJsonSchemaTool,
  type AnyToolDefinition,
  type JsonSchemaToolDefinition,
  type ToolContext,
  type ToolDefinition,
  type ToolSettings,
  type ReturnBehavior,
  type Tool,
  PersonAsked,
  type PersonAnswer,
  type PersonForm,
} from './define-tool';
export { ToolError } from './tool-error';
export { a2aAgent, type A2AAgentOptions } from './a2a-client/a2a-agent';
export {
  ToolRegistry,
  type OpenAIToolSpec,
  type RegisterOptions,
  type CheckedArguments,
  type ToolRoute,
} from './registry';
export type { ToolProvider, ToolProviderRequest } from './tool-provider';
export { parametersJsonSchema, isStrictCompatible, type JsonSchema } from '../models/json-schema';
export { checkJsonArguments } from './check-json-arguments';
