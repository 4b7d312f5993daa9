import { add, sqrt, squareRoot, stringLength, sum } from './builtin/calculator';
import { searchWeather } from './builtin/weather';
import { ToolRegistry } from './registry';

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
} from './define-tool';
export { ToolError } from './tool-error';
export { ToolRegistry, type OpenAIToolSpec, type RegisterOptions, type CheckedArguments } from './registry';
export type { ToolProvider, ToolProviderRequest } from './tool-provider';
export { parametersJsonSchema, isStrictCompatible, type JsonSchema } from './json-schema';
export { checkJsonArguments } from './check-json-arguments';
export { add, sqrt, squareRoot, stringLength, sum, searchWeather };

/** The example tools from the documents. */
export const builtinTools = [stringLength, add, sqrt, sum, squareRoot, searchWeather];

/** A registry holding the built-in tools; workers use it unless given their own. */
export function defaultToolRegistry(): ToolRegistry {
  return new ToolRegistry(builtinTools);
}
