import { z } from 'zod';
import { defineAgent } from 'durable-agents';
import { searchWeather } from 'durable-agents/examples';

/** Reads the weather of a city and answers as JSON your workflow can branch on. */
export const forecaster = defineAgent({
  name: 'forecaster',
  instructions:
    'Look up the weather of the city with search_weather (degrees Celsius), then answer with the city and the temperature.',
  tools: [searchWeather],
  output: z.object({ city: z.string(), celsius: z.number() }),
});

export const TASK_QUEUE = 'agent-in-workflow-example';
