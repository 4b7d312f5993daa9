import { add, sqrt, squareRoot, stringLength, sum } from './builtin/calculator';
import { searchWeather } from './builtin/weather';
import { ToolRegistry } from './registry';

export { defineTool, type ToolContext, type ToolDefinition, type ReturnBehavior, type Tool } from './define-tool';
export { ToolRegistry, type OpenAIToolSpec } from './registry';
export { parametersJsonSchema, isStrictCompatible } from './json-schema';
export { add, sqrt, squareRoot, stringLength, sum, searchWeather };

/** The example tools from the documents. */
export const builtinTools = [stringLength, add, sqrt, sum, squareRoot, searchWeather];

/** A registry holding the built-in tools; workers use it unless given their own. */
export function defaultToolRegistry(): ToolRegistry {
  return new ToolRegistry(builtinTools);
}
