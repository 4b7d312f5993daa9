import { z } from 'zod';
import { add, sqrt, squareRoot, stringLength, sum } from './tools/calculator';
import { searchWeather } from './tools/weather';
import { defineAgent } from '../../src/agents/define-agent';

/**
 * The agents this repository's worker, CLI and HTTP API serve: the documents' examples as named
 * agents. Your own worker declares its own with `defineAgent`.
 */

/** The calculator of the documents (Quarkus LangChain4j, LangChain4j's MathGenius). */
export const calculatorAgent = defineAgent({
  name: 'calculator',
  description: "Arithmetic with tools: the documents' calculator",
  examples: [
    'What is the square root of the sum of the numbers of letters in the words "hello" and "world"?',
    'What is 123 + 456?',
  ],
  instructions:
    'You are a careful calculator. Use the tools for every step of the arithmetic, then give the result in one sentence.',
  tools: [stringLength, add, sqrt, sum, squareRoot],
});

/** The weather example of the LangChain document, answering with structured output. */
export const weatherAgent = defineAgent({
  name: 'weather',
  description: 'Looks up the weather of a city and answers as JSON: city, temperature, temperatureUnit',
  examples: ['What is the weather in Beijing?', 'How warm is it in Paris?'],
  instructions:
    'You report the current weather. Look the city up with search_weather (it answers in degrees Celsius), then answer with the city, the temperature and its unit.',
  tools: [searchWeather],
  output: z.object({
    city: z.string(),
    temperature: z.number(),
    temperatureUnit: z.enum(['CELSIUS', 'FAHRENHEIT']),
  }),
});

/** Both example agents. */
export const exampleAgents = [calculatorAgent, weatherAgent];
