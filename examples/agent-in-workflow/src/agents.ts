import { z } from 'zod';
import { defineAgent, defineTool } from 'durable-agents';

/** A stand-in for a weather service: a fixed temperature per city, so runs are reproducible. */
const TEMPERATURES_C: Record<string, number> = { beijing: 30, london: 15, paris: 18 };

export const searchWeather = defineTool({
  name: 'search_weather',
  description: 'The current temperature of a city, in degrees Celsius',
  parameters: z.object({ city: z.string().describe('City name, e.g. Beijing') }),
  execute: ({ city }) => TEMPERATURES_C[city.trim().toLowerCase()] ?? 20,
});

/** Reads the weather of a city and answers as JSON your workflow can branch on. */
export const forecaster = defineAgent({
  name: 'forecaster',
  instructions:
    'Look up the weather of the city with search_weather (degrees Celsius), then answer with the city and the temperature.',
  tools: [searchWeather],
  output: z.object({ city: z.string(), celsius: z.number() }),
});

export const TASK_QUEUE = 'agent-in-workflow-example';
