import type { AgentInput } from '../../src/core';
import { answer, call, toolResults, type Step } from '../helpers/scripted-model';

/** Runs whose histories are recorded into test/histories and replayed against the current workflow code. */
export interface Scenario {
  name: string;
  input: AgentInput;
  steps: Step[];
}

export const scenarios: Scenario[] = [
  {
    name: 'calculator-chain',
    input: { message: 'What is the square root of the sum of the numbers of letters in the words "hello" and "world"?' },
    steps: [
      call(['stringLength', { s: 'hello' }], ['stringLength', { s: 'world' }]),
      (req) => call(['add', { a: Number(toolResults(req)[0]), b: Number(toolResults(req)[1]) }]),
      (req) => call(['sqrt', { x: Number(toolResults(req)[2]) }]),
      answer('approximately 3.162'),
    ],
  },
  {
    name: 'immediate-return',
    input: { message: 'What is the value of 11 + 31?', tools: ['add'], immediateTools: ['add'] },
    steps: [call(['add', { a: 11, b: 31 }])],
  },
  {
    name: 'tool-errors',
    input: { message: 'errors', tools: ['add'] },
    steps: [call(['multiply', { a: 1 }], ['add', '{"a":'], ['add', { a: 'x', b: 1 }]), answer('recovered')],
  },
  {
    name: 'iteration-limit-generate',
    input: { message: 'loop', maxIterations: 2, onLimit: 'generate', system: 'You are terse.' },
    steps: [call(['add', { a: 1, b: 1 }]), call(['add', { a: 2, b: 2 }]), answer('best effort')],
  },
  {
    name: 'time-limit-armed',
    input: { message: 'weather', tools: ['search_weather'], maxExecutionTime: '5m' },
    steps: [call(['search_weather', { city: 'Beijing' }]), answer('30 degrees: bring sunscreen')],
  },
  {
    name: 'time-limit-fired',
    input: { message: 'wait', tools: ['slow'], maxExecutionTime: '1s' },
    steps: [call(['slow', { key: 'record' }])],
  },
];
