import { z } from 'zod';
import { defineTool } from '../../../src/tools/define-tool';

/**
 * A demo stub, not a weather service: the LangChain AgentExecutor document's `search_weather`
 * returns 30 for every city. We keep that for Beijing (so the document's example reads the same)
 * and give other cities fixed values, so runs are reproducible.
 */
const TEMPERATURES_C: Record<string, number> = {
  beijing: 30,
  shanghai: 28,
  london: 15,
  paris: 18,
  'new york': 22,
  tokyo: 24,
};
const DEFAULT_TEMPERATURE_C = 20;

/** `search_weather(city)`: the LangChain document's weather tool, a fixed stub. */
export const searchWeather = defineTool({
  name: 'search_weather',
  description: 'useful for when you need to search for weather',
  parameters: z.object({ city: z.string().describe('City name, e.g. Beijing') }),
  execute: ({ city }) => TEMPERATURES_C[city.trim().toLowerCase()] ?? DEFAULT_TEMPERATURE_C,
});
