import { ToolRegistry } from '../../src/tools/registry';
import { add, sqrt, squareRoot, stringLength, sum } from './tools/calculator';
import { searchWeather } from './tools/weather';

/**
 * `durable-agents/examples`: the example tools and agents of the documents this project started
 * from (a calculator, a weather lookup), and the offline model of the demo. For trying things out;
 * your own agents and tools are declared with `defineAgent` and `defineTool`.
 */
export { add, sqrt, squareRoot, stringLength, sum, searchWeather };
export { calculatorAgent, weatherAgent, exampleAgents } from './agents';
export { demoModel } from '../../src/testing/demo-model';

/** The example tools: the calculator's and the weather lookup. */
export const exampleTools = [stringLength, add, sqrt, sum, squareRoot, searchWeather];

/** A registry holding the example tools. */
export function exampleToolRegistry(): ToolRegistry {
  return new ToolRegistry(exampleTools);
}
