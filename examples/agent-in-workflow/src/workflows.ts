// Your own workflow code. It imports only durable-agents/workflow, which is safe in workflows.
import { executeAgent } from 'durable-agents/workflow';

/** Plans a trip: asks the forecaster agent (a child workflow), then decides with its answer. */
export async function planTrip(city: string): Promise<string> {
  const forecast = await executeAgent({ agent: 'forecaster', message: `What is the weather in ${city}?` });
  if (forecast.status !== 'completed')
    return `No plan for ${city}: the forecast failed (${forecast.error ?? forecast.status}).`;
  const { celsius } = forecast.output as { city: string; celsius: number };
  const advice = celsius >= 25 ? 'pack sunscreen' : celsius >= 15 ? 'pack a light jacket' : 'pack a warm coat';
  return `${city} is ${celsius} °C: ${advice}. (forecast by ${forecast.workflowId})`;
}
